"""The soak: a long mixed load on one tenant, with the API's resident memory sampled over time.

Concurrency 16, each client looping until the deadline on 80 % recall (LoCoMo questions) and 20 %
remember (new texts), on 10,000 preloaded memories. Every minute (every tenth of the run in
smoke) the API's RSS is read from /proc. Reported: latency percentiles up to p99.9, errors, the
RSS series, and its growth over the last third of the run (the issue's criterion: at most 2 % over
the last 10 minutes of 30).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from bench._client import ToolCallError, call_text, session
from bench._data import MemoryTexts
from bench._inproc import Local, preload
from bench._server import ApiServer

SOAK_TENANT: Final = "soak"
CONCURRENCY: Final = 16
RECALL_SHARE: Final = 0.8


async def run_soak(
    local: Local,
    server: ApiServer,
    texts: MemoryTexts,
    questions: Sequence[str],
    *,
    memories: int,
    duration_s: float,
    sample_every_s: float,
    log: Any,
) -> dict[str, Any]:
    log(f"soak: preloading {memories} memories")
    await preload(local, SOAK_TENANT, texts.stored, range(memories), cache={})
    deadline = time.monotonic() + duration_s
    latencies: dict[str, list[float]] = {"recall": [], "remember": []}
    errors: list[str] = []
    fresh = iter(range(10**9))

    async def client(number: int) -> None:
        rng = random.Random(number)
        async with session(server.url, SOAK_TENANT) as mcp:
            while time.monotonic() < deadline:
                if rng.random() < RECALL_SHARE:
                    tool, arguments = "recall", {"query": rng.choice(questions)}
                else:
                    tool, arguments = "remember", {"content": texts.fresh(next(fresh))}
                started = time.perf_counter()
                try:
                    await call_text(mcp, tool, arguments)
                except ToolCallError as error:
                    errors.append(f"{tool}: {str(error)[:200]}")
                latencies[tool].append(time.perf_counter() - started)

    rss: list[dict[str, float]] = []

    async def sampler() -> None:
        started = time.monotonic()
        while time.monotonic() < deadline:
            rss.append(
                {
                    "t_s": round(time.monotonic() - started, 1),
                    "rss_mib": round(server.rss_bytes() / 2**20, 1),
                }
            )
            await asyncio.sleep(sample_every_s)
        rss.append(
            {"t_s": round(time.monotonic() - started, 1), "rss_mib": server.rss_bytes() / 2**20}
        )

    log(f"soak: {CONCURRENCY} clients for {duration_s:.0f} s, RSS every {sample_every_s:.0f} s")
    await asyncio.gather(sampler(), *(client(i) for i in range(CONCURRENCY)))
    last_third = [s["rss_mib"] for s in rss if s["t_s"] >= duration_s * 2 / 3]
    growth = (last_third[-1] - last_third[0]) / last_third[0] if len(last_third) > 1 else 0.0
    return {
        "memories": memories,
        "duration_s": duration_s,
        "concurrency": CONCURRENCY,
        "calls": {tool: len(values) for tool, values in latencies.items()},
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency_ms": {tool: _percentiles(values) for tool, values in latencies.items()},
        "rss": rss,
        "rss_growth_last_third": round(growth, 4),
    }


def _percentiles(seconds: Sequence[float]) -> dict[str, float]:
    if not seconds:
        return {}
    ms = np.asarray(seconds) * 1000
    p50, p95, p99, p999 = np.percentile(ms, [50, 95, 99, 99.9])
    return {
        "p50": round(float(p50), 1),
        "p95": round(float(p95), 1),
        "p99": round(float(p99), 1),
        "p99.9": round(float(p999), 1),
        "max": round(float(ms.max()), 1),
    }


__all__ = ["run_soak"]
