"""Threads a large exact scan is split across (see ScanWorkers)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final

from shared.errors import InvariantError
from shared.process.cpus import usable_cpus

# Rows per matrix-vector product. OpenBLAS runs a product this size on the calling thread;
# from ~4,000 rows it splits one over its own workers, which spin while they wait: under load
# they took the cores from the embedding model, slowing both the scan and the model
# (docs/benchmarks.md). Scans are split by ScanWorkers instead.
SCAN_BLOCK_ROWS: Final = 1024
# A scan smaller than this is not split: handing a part to a thread costs more than it saves.
_MIN_ROWS_PER_PART: Final = 4096
# Beyond this many threads a scan is bound by memory bandwidth, not by threads.
_MAX_SCAN_THREADS: Final = 4


class ScanWorkers:
    """Threads a large scan is split across; the calling thread scans one part itself.

    On two cores a scan runs more than twice as fast as on one: one core alone does not reach
    the memory bandwidth. These are plain threads that block when idle, so under load a split
    scan only shares the cores, and a busy model beside it keeps its throughput
    (docs/benchmarks.md).
    """

    def __init__(self, threads: int | None = None) -> None:
        """``threads`` in all, the caller's included; default: the CPUs this process can use
        (its container's limit included), at most four."""
        self.threads = max(
            1, threads if threads is not None else min(_MAX_SCAN_THREADS, usable_cpus())
        )
        self._pool = (
            ThreadPoolExecutor(max_workers=self.threads - 1, thread_name_prefix="scan")
            if self.threads > 1
            else None
        )

    def parts(self, rows: int) -> list[tuple[int, int]]:
        """Contiguous row ranges, one per thread that is worth using, block-aligned."""
        count = max(1, min(self.threads, rows // _MIN_ROWS_PER_PART))
        blocks = -(-rows // SCAN_BLOCK_ROWS)
        bounds = [min(rows, (blocks * i // count) * SCAN_BLOCK_ROWS) for i in range(count + 1)]
        return [(bounds[i], bounds[i + 1]) for i in range(count)]

    def submit(self, work: Callable[[], None]) -> Future[None]:
        if self._pool is None:
            raise InvariantError("a one-thread ScanWorkers has no helpers to submit to")
        return self._pool.submit(work)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
