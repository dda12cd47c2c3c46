"""The benchmark runner: speed, scale and retrieval quality through the real service.

    python -m bench --data /work/shared/bench-data --out bench/results

See ``python -m bench --help`` and docs/benchmarks.md. The loose scripts beside this package
(bench_embedding.py, calibrate_floor.py, ...) are run by path and are not part of it.
"""
