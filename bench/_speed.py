"""Speed and scale: remember and recall through HTTP at growing tenant sizes and concurrency,
where recall's time goes, counter reads against a backlog, and cold start."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp import web

from bench._client import Call, LoadResult, run_load
from bench._data import MemoryTexts
from bench._inproc import Local, counter_reads, preload
from bench._server import ApiServer
from bench._steps import recall_steps

SPEED_TENANT = "bench-speed"


@dataclass(frozen=True)
class SpeedPlan:
    sizes: tuple[int, ...]
    levels: tuple[int, ...]
    recall_calls: int  # per concurrency level above 1
    recall_calls_serial: int  # at concurrency 1
    remember_calls: int
    remember_calls_serial: int
    breakdown_size: int
    breakdown_queries: int
    transport_calls: int
    counter_levels: tuple[int, ...]
    counter_reads: int
    cold_start_reps: int
    probe_memories: int  # distractors in the keyword probe
    soak_memories: int
    soak_s: float
    multiproc_memories: int
    multiproc_recalls: int  # per process, with a quarter as many remembers beside


FULL = SpeedPlan(
    sizes=(1_000, 10_000, 50_000),
    levels=(1, 8, 16, 32),
    recall_calls=256,
    recall_calls_serial=300,
    remember_calls=128,
    remember_calls_serial=80,
    breakdown_size=10_000,
    breakdown_queries=200,
    transport_calls=300,
    counter_levels=(0, 10, 100, 1000),
    counter_reads=20,
    cold_start_reps=3,
    probe_memories=10_000,
    soak_memories=10_000,
    soak_s=1800.0,
    multiproc_memories=10_000,
    multiproc_recalls=400,
)
SMOKE = SpeedPlan(
    sizes=(30, 60),
    levels=(1, 4),
    recall_calls=12,
    recall_calls_serial=12,
    remember_calls=6,
    remember_calls_serial=6,
    breakdown_size=60,
    breakdown_queries=8,
    transport_calls=10,
    counter_levels=(0, 5),
    counter_reads=3,
    cold_start_reps=1,
    probe_memories=300,
    soak_memories=60,
    soak_s=3.0,
    multiproc_memories=60,
    multiproc_recalls=8,
)


def _metric(samples: dict[str, float], name: str, labels: str) -> float:
    return samples.get(f"{name}{{{labels}}}", 0.0)


def _histogram_mean_ms(
    before: dict[str, float], after: dict[str, float], name: str, labels: str
) -> float | None:
    count = _metric(after, f"{name}_count", labels) - _metric(before, f"{name}_count", labels)
    total = _metric(after, f"{name}_sum", labels) - _metric(before, f"{name}_sum", labels)
    return round(1000 * total / count, 3) if count else None


def _observed(samples: dict[str, float], name: str) -> dict[str, float]:
    """Every ``<name>_count`` sample with its labels: empty when nothing was ever observed."""
    prefix = f"{name}_count{{"
    return {key[len(prefix) - 1 :]: v for key, v in samples.items() if key.startswith(prefix)}


async def _measured(
    server: ApiServer, tool: str, calls: Sequence[Call], *, concurrency: int, warmup: Sequence[Call]
) -> tuple[LoadResult, dict[str, Any]]:
    before, cpu_before = await server.metrics(), server.cpu()
    result = await run_load(server.url, SPEED_TENANT, calls, concurrency=concurrency, warmup=warmup)
    cpu_after, after = server.cpu(), await server.metrics()
    n = len(calls)
    tool_ms = _histogram_mean_ms(before, after, "mcp_memory_tool_duration_seconds", f"tool={tool}")
    row: dict[str, Any] = {
        "tool": tool,
        "concurrency": concurrency,
        **asdict(result.latency),
        "throughput_per_s": result.throughput_per_s,
        "wall_s": result.wall_s,
        "server_tool_mean_ms": tool_ms,
        # The server's own timings of embedding and storage (None where not observed).
        "server_embed_mean_ms": _histogram_mean_ms(
            before, after, "mcp_memory_embedding_duration_seconds", "operation=embed"
        ),
        "server_vector_query_mean_ms": _histogram_mean_ms(
            before, after, "mcp_memory_storage_duration_seconds", "operation=vector_query"
        ),
        "transport_mean_ms": (
            round(result.latency.mean_ms - tool_ms, 3) if tool_ms is not None else None
        ),
        "cpu_ms_per_call": {
            "api": round(1000 * (cpu_after.api_s - cpu_before.api_s) / n, 3),
            "postgres": round(1000 * (cpu_after.postgres_s - cpu_before.postgres_s) / n, 3),
            "client": round(1000 * result.client_cpu_s / n, 3),
        },
        # How the exact scan was served meanwhile: a miss scanned in SQL.
        "scan_snapshot": _scan_snapshot(before, after),
    }
    return result, row


# A snapshot that has not caught up after this long is measured as it is (its misses show).
_CATCH_UP_LIMIT_S = 180.0


async def _until_snapshot_caught_up(
    server: ApiServer, round_calls: Sequence[Call]
) -> dict[str, Any]:
    """Warm-up rounds until one is served wholly from the API's scan snapshot.

    The preload writes from this process, which is another writer as far as the API is
    concerned: its snapshot refreshes in the background and queries scan in SQL meanwhile (at
    50,000 memories that took longer than one round, and its misses were the slowest calls of
    the measured run). Rows measure the steady state; how long catching up took is reported.
    A store that keeps no snapshots needs one round.
    """
    started = time.perf_counter()
    rounds = 0
    while True:
        before = await server.metrics()
        await run_load(server.url, SPEED_TENANT, round_calls, concurrency=1)
        rounds += 1
        served = _scan_snapshot(before, await server.metrics())
        elapsed = time.perf_counter() - started
        if not served or served["misses"] == 0 or elapsed > _CATCH_UP_LIMIT_S:
            return {"rounds": rounds, "seconds": round(elapsed, 1), "last_round": served}


def _scan_snapshot(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """Queries answered from a snapshot or missed, refreshes and skips during a run (from
    /metrics; empty where the store keeps no snapshots), and the bytes held at its end."""
    names = {
        "hits": "mcp_memory_scan_snapshot_queries_total{outcome=hit}",
        "misses": "mcp_memory_scan_snapshot_queries_total{outcome=miss}",
        "refreshes": "mcp_memory_scan_snapshot_refreshes_total{}",
        "skips": "mcp_memory_scan_snapshot_skips_total{}",
    }
    if not all(name in after for name in names.values()):
        return {}
    counts = {key: after[name] - before.get(name, 0.0) for key, name in names.items()}
    return {**counts, "held_mib": round(after["mcp_memory_scan_snapshot_bytes{}"] / 2**20, 1)}


def _ms(values: Sequence[float]) -> dict[str, float]:
    ms = np.asarray(values, dtype=np.float64) * 1000
    return {
        "mean_ms": round(float(ms.mean()), 3),
        "p50_ms": round(float(np.percentile(ms, 50)), 3),
        "p95_ms": round(float(np.percentile(ms, 95)), 3),
    }


async def transport_floor(calls: int) -> dict[str, float]:
    """bench/bench_transport.py's measurement: the MCP round trip to a tool that does nothing
    (``echo``, no storage, no model), in this process, through the official client."""
    from bench.bench_transport import measure
    from services.api.http.app import build_app
    from tests.api._catalogue import catalogue_runtime
    from tests.api.conftest import test_config

    runner = web.AppRunner(build_app(test_config(), open_runtime=catalogue_runtime()))
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        samples = await measure(
            f"http://127.0.0.1:{runner.addresses[0][1]}/mcp", mode="auto", calls=calls
        )
    finally:
        await runner.cleanup()
    return _ms([s / 1000 for s in samples])


async def run_speed(
    local: Local,
    server: ApiServer,
    texts: MemoryTexts,
    questions: Sequence[str],
    plan: SpeedPlan,
    log: Any,
) -> dict[str, Any]:
    stored = 0  # memories in the tenant
    next_text = 0  # next preload text index
    next_remember = 0
    next_question = 0
    sizes: list[dict[str, Any]] = []
    breakdown: dict[str, Any] | None = None
    vectors: dict[str, list[float]] = {}
    for size in plan.sizes:
        missing = size - stored
        load_s = 0.0
        if missing > 0:
            log(f"speed: preloading {missing} memories in-process to reach {size}")
            load_s = await preload(
                local,
                SPEED_TENANT,
                texts.stored,
                range(next_text, next_text + missing),
                cache=vectors,
            )
            next_text += missing
            stored += missing
        warmup: list[Call] = [("recall", {"query": q}) for q in questions[:4]]
        caught_up = await _until_snapshot_caught_up(server, warmup * 5)
        log(f"speed: {size} warm: {caught_up['rounds']} round(s), {caught_up['seconds']} s")
        recall_rows, remember_rows = [], []
        for level in plan.levels:
            n = plan.recall_calls_serial if level == 1 else plan.recall_calls
            calls: list[Call] = [
                ("recall", {"query": questions[(next_question + i) % len(questions)]})
                for i in range(n)
            ]
            next_question += n
            _, row = await _measured(server, "recall", calls, concurrency=level, warmup=warmup)
            recall_rows.append(row)
            log(
                f"speed: {size} recall c={level}: p50 {row['p50_ms']} ms p95 {row['p95_ms']} ms "
                f"{row['throughput_per_s']}/s"
            )
        recalls_done = await server.metrics()
        for level in plan.levels:
            n = plan.remember_calls_serial if level == 1 else plan.remember_calls
            calls = [("remember", {"content": texts.fresh(next_remember + i)}) for i in range(n)]
            next_remember += n
            result, row = await _measured(server, "remember", calls, concurrency=level, warmup=())
            known = sum("Already known" in answer for answer in result.answers)
            stored += n - known
            row["already_known"] = known
            remember_rows.append(row)
            log(f"speed: {size} remember c={level}: p50 {row['p50_ms']} ms")
        sizes.append(
            {
                "size": size,
                "preload_s": round(load_s, 1),
                "recall": recall_rows,
                "remember": remember_rows,
                "warm_up": caught_up,
                "api_peak_rss_mib": round(server.peak_rss_bytes() / 2**20, 1),
                "api_rss_mib": round(server.rss_bytes() / 2**20, 1),
                "memories_after": stored,
            }
        )
        if size == plan.breakdown_size:
            log(f"speed: timing recall's steps in-process at {size}")
            steps = await recall_steps(local, SPEED_TENANT, questions[: plan.breakdown_queries])
            breakdown = {
                "size": size,
                "queries": plan.breakdown_queries,
                "in_process": {name: _ms(values) for name, values in asdict(steps).items()},
                "http_c1": recall_rows[0],
                "metrics_observed": {
                    "mcp_memory_tool_duration_seconds": _observed(
                        recalls_done, "mcp_memory_tool_duration_seconds"
                    ),
                    "mcp_memory_embedding_duration_seconds": _observed(
                        recalls_done, "mcp_memory_embedding_duration_seconds"
                    ),
                    "mcp_memory_storage_duration_seconds": _observed(
                        recalls_done, "mcp_memory_storage_duration_seconds"
                    ),
                },
                "transport_floor_echo": await transport_floor(plan.transport_calls),
            }
    return {
        "tenant": SPEED_TENANT,
        "distinct_texts": texts.distinct,
        "sizes": sizes,
        "breakdown": breakdown,
    }


async def run_counters(local: Local, plan: SpeedPlan) -> list[dict[str, Any]]:
    reads = await counter_reads(local, plan.counter_levels, reads=plan.counter_reads)
    return [asdict(r) for r in reads]


async def run_cold_start(work: Path, reps: int, log: Any) -> dict[str, Any]:
    """Spawn to /health 200 with --local: on an empty data dir (initdb, schema, model) and on
    the same dir again once the first process (and with it PostgreSQL) has stopped."""
    empty: list[dict[str, Any]] = []
    existing: list[dict[str, Any]] = []
    for rep in range(reps):
        data_dir = work / f"cold-{rep}"
        for runs in (empty, existing):
            server = await ApiServer.start(data_dir)
            boot = server.boot
            assert boot is not None
            runs.append(
                {
                    "health_s": round(boot.health_s, 3),
                    "listening_s": round(boot.listening_s, 3) if boot.listening_s else None,
                    "parts_ms": boot.parts_ms,
                    "peak_rss_mib": round(server.peak_rss_bytes() / 2**20, 1),
                }
            )
            code = await server.stop()
            if code != 0:
                raise RuntimeError(f"the API exited with {code} after the cold start run")
            await asyncio.sleep(0.5)
        log(
            f"cold start {rep}: empty {empty[-1]['health_s']} s, existing "
            f"{existing[-1]['health_s']} s"
        )
    return {
        "empty_dir": {"runs": empty, "median_s": statistics.median(r["health_s"] for r in empty)},
        "existing_dir": {
            "runs": existing,
            "median_s": statistics.median(r["health_s"] for r in existing),
        },
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }


__all__ = ["FULL", "SMOKE", "SpeedPlan", "run_cold_start", "run_counters", "run_speed"]
