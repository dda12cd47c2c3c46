"""Several API processes on one PostgreSQL: the production case of a Deployment.

Three ``mcp-memory-api --local`` processes and a compactor share one embedded PostgreSQL, with
10,000 memories in one tenant. Each process gets 80 % recall and 20 % remember on that tenant,
so every write of one process moves the generation the other two check. Beside it, the same
total load (the same concurrency in all) on one process alone. Reported: recall p50, p95 and
mean, the share of recalls answered by the SQL scan rather than a snapshot, and the compactor's
shard backlog at the end. Targets: recall p95 and mean with three writing processes at most 1.3
times the one-process figures, and an SQL-scan share under 5 %.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from bench._client import Call, Latency, LoadResult, run_load
from bench._data import MemoryTexts
from bench._inproc import Local, preload
from bench._server import ApiServer, free_port, server_env, tied_to_runner

TENANT: Final = "bench-multiproc"
PROCESSES: Final = 3
RECALL_CONCURRENCY_EACH: Final = 2
REMEMBER_CONCURRENCY_EACH: Final = 1
_MISS: Final = "mcp_memory_scan_snapshot_queries_total{outcome=miss}"
_HIT: Final = "mcp_memory_scan_snapshot_queries_total{outcome=hit}"


def _compactor_command() -> list[str]:
    script = Path(sys.executable).parent / "mcp-memory-compactor"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from services.compactor.main import main; main()"]


@contextlib.asynccontextmanager
async def _compactor(data_dir: Path) -> AsyncIterator[str]:
    """The compactor on the same data dir; yields its /metrics URL."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        *_compactor_command(),
        "--local",
        "--data-dir",
        str(data_dir),
        "--metrics-port",
        str(port),
        env={**server_env(), "COMPACTOR_FOLD_INTERVAL_S": "5"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        **tied_to_runner(),
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        async with httpx2.AsyncClient(timeout=5) as http:
            for _ in range(300):
                with contextlib.suppress(httpx2.TransportError):
                    if (await http.get(url)).status_code == 200:
                        break
                await asyncio.sleep(0.2)
        yield url
    finally:
        if process.returncode is None:
            process.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 30)


async def _gauge(url: str, name: str) -> float | None:
    async with httpx2.AsyncClient(timeout=5) as http:
        text = (await http.get(url)).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    return None


def _calls(
    texts: MemoryTexts, questions: Sequence[str], start: int, recalls: int
) -> tuple[list[Call], list[Call]]:
    recall = [
        ("recall", {"query": questions[(start + i) % len(questions)]}) for i in range(recalls)
    ]
    remember = [("remember", {"content": texts.fresh(start + i)}) for i in range(recalls // 4)]
    return recall, remember


async def _caught_up(servers: Sequence[ApiServer], questions: Sequence[str]) -> None:
    """Warm-up recalls until every process answers from its snapshot (each read the 10,000
    preloaded rows once in the background)."""
    warm = [("recall", {"query": q}) for q in questions[:20]]
    for server in servers:
        for _ in range(60):
            before = await server.metrics()
            await run_load(server.url, TENANT, warm, concurrency=1)
            after = await server.metrics()
            if after.get(_MISS, 0.0) - before.get(_MISS, 0.0) == 0:
                break


async def _round(
    servers: Sequence[ApiServer],
    texts: MemoryTexts,
    questions: Sequence[str],
    *,
    recalls_each: int,
    start: int,
    share: int,
) -> dict[str, Any]:
    """Recall and remember at once on every server; ``share`` scales one server's concurrency
    to carry the load of several."""
    before = [await s.metrics() for s in servers]
    jobs = []
    for n, server in enumerate(servers):
        recall, remember = _calls(texts, questions, start + n * 10_000, recalls_each * share)
        jobs.append(
            run_load(server.url, TENANT, recall, concurrency=RECALL_CONCURRENCY_EACH * share)
        )
        jobs.append(
            run_load(server.url, TENANT, remember, concurrency=REMEMBER_CONCURRENCY_EACH * share)
        )
    results: list[LoadResult] = await asyncio.gather(*jobs)
    after = [await s.metrics() for s in servers]
    recall_results = results[0::2]
    misses = sum(a.get(_MISS, 0) - b.get(_MISS, 0) for a, b in zip(after, before, strict=True))
    hits = sum(a.get(_HIT, 0) - b.get(_HIT, 0) for a, b in zip(after, before, strict=True))
    # Percentiles over every recall of every process together, as one deployment serves them.
    pooled = Latency.of([seconds for r in recall_results for seconds in r.seconds])
    return {
        "processes": len(servers),
        "recall": [asdict(r.latency) for r in recall_results],
        "recall_p50_ms": pooled.p50_ms,
        "recall_p95_ms": pooled.p95_ms,
        "recall_mean_ms": pooled.mean_ms,
        "remember": [asdict(r.latency) for r in results[1::2]],
        "sql_scans": int(misses),
        "snapshot_answers": int(hits),
        "sql_scan_share": round(misses / (hits + misses), 4) if hits + misses else None,
    }


async def run_multiproc(
    local: Local,
    server: ApiServer,
    texts: MemoryTexts,
    questions: list[str],
    *,
    memories: int,
    recalls_each: int,
    log: Any,
) -> dict[str, Any]:
    log(f"multiproc: preloading {memories:,} memories")
    await preload(local, TENANT, texts.stored, range(memories), cache={})
    data_dir = server.data_dir
    log("multiproc: one process alone, then three processes and the compactor")
    await _caught_up([server], questions)
    one = await _round([server], texts, questions, recalls_each=recalls_each, start=0, share=3)
    others = [await ApiServer.start(data_dir) for _ in range(PROCESSES - 1)]
    try:
        async with _compactor(data_dir) as compactor_metrics:
            servers = [server, *others]
            await _caught_up(servers, questions)
            three = await _round(
                servers, texts, questions, recalls_each=recalls_each, start=50_000, share=1
            )
            backlog = await _gauge(compactor_metrics, "mcp_memory_compactor_backlog_shards")
    finally:
        for other in others:
            await other.stop()
    return {
        "memories": memories,
        "tenant": TENANT,
        "cpus": os.cpu_count(),
        "one_process": one,
        "three_processes": three,
        "compactor_backlog_shards": backlog,
        "p95_ratio": round(three["recall_p95_ms"] / one["recall_p95_ms"], 3),
        "mean_ratio": round(three["recall_mean_ms"] / one["recall_mean_ms"], 3),
    }


__all__ = ["run_multiproc"]
