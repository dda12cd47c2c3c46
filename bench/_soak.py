"""The soak: a long mixed load on one tenant, with the API's resident memory sampled over time.

Concurrency 16, each client looping until the deadline on a mix of every memory tool at a steady
data size: 70 % recall (LoCoMo questions), 10 % remember of a new text followed by forget of it,
10 % list_memories and 10 % memory_stats, on 10,000 preloaded memories. Remembers that stayed
would grow the tenant (and every per-tenant structure with it) by ~20 a second; pairing each
with its forget keeps the store at 10,000, so RSS growth means a leak, not more data. Every
minute (every thirtieth of the run in smoke) the API's RSS is read from /proc. Reported: latency
percentiles up to p99.9, errors, the RSS series, and its growth over the last third of the run
(the issue's criterion: at most 2 % over the last 10 minutes of 30).

RSS moves by tens of MiB from one second to the next (a forget's new scan snapshot, a fold's
decoded merged.json, each mapped and unmapped whole), so two samples ten minutes apart say more
about that noise than about a trend. The growth is therefore read from a least-squares line
through every sample of the last third (they are taken ten times as often as the series shows),
and the two-point figure is reported beside it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from bench._client import ToolCallError, call_text, ids_in, session
from bench._data import MemoryTexts
from bench._inproc import Local, preload
from bench._server import ApiServer

SOAK_TENANT: Final = "soak"
CONCURRENCY: Final = 16
# Samples are taken this many times as often as the reported series shows them.
SHOWN_EVERY: Final = 10
# Cumulative shares of each kind of step.
MIX: Final = (
    ("recall", 0.7),
    ("remember+forget", 0.8),
    ("list_memories", 0.9),
    ("memory_stats", 1.0),
)


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
    latencies: dict[str, list[float]] = {
        tool: [] for tool in ("recall", "remember", "forget", "list_memories", "memory_stats")
    }
    errors: list[str] = []
    already_known = [0]
    fresh = iter(range(10**9))

    async def client(number: int) -> None:
        rng = random.Random(number)
        async with session(server.url, SOAK_TENANT) as mcp:

            async def timed(tool: str, arguments: dict[str, Any]) -> str:
                started = time.perf_counter()
                try:
                    return await call_text(mcp, tool, arguments)
                except ToolCallError as error:
                    errors.append(f"{tool}: {str(error)[:200]}")
                    return ""
                finally:
                    latencies[tool].append(time.perf_counter() - started)

            while time.monotonic() < deadline:
                draw = rng.random()
                kind = next(name for name, upto in MIX if draw < upto)
                if kind == "recall":
                    await timed("recall", {"query": rng.choice(questions)})
                elif kind == "remember+forget":
                    stored = await timed("remember", {"content": texts.fresh(next(fresh))})
                    if "Stored as" in stored:
                        await timed("forget", {"id": ids_in(stored)[0]})
                    elif stored:
                        # A near-duplicate of a stored memory: nothing new, nothing to forget.
                        already_known[0] += 1
                else:
                    await timed(kind, {})

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
            {
                "t_s": round(time.monotonic() - started, 1),
                "rss_mib": round(server.rss_bytes() / 2**20, 1),
            }
        )

    log(f"soak: {CONCURRENCY} clients for {duration_s:.0f} s, RSS every {sample_every_s:.0f} s")
    await asyncio.gather(sampler(), *(client(i) for i in range(CONCURRENCY)))
    last_third = [s for s in rss if s["t_s"] >= duration_s * 2 / 3]
    return {
        "memories": memories,
        "duration_s": duration_s,
        "concurrency": CONCURRENCY,
        "calls": {tool: len(values) for tool, values in latencies.items()},
        "mix": dict(MIX),
        "errors": len(errors),
        "error_samples": errors[:5],
        "latency_ms": {tool: _percentiles(values) for tool, values in latencies.items()},
        "already_known": already_known[0],
        "rss": rss[::SHOWN_EVERY],
        "rss_samples": len(rss),
        "rss_growth_last_third": round(fitted_growth(last_third), 4),
        "rss_growth_last_third_endpoints": round(endpoint_growth(last_third), 4),
    }


def fitted_growth(samples: Sequence[dict[str, float]]) -> float:
    """Growth over the samples' span read from a least-squares line through all of them: the
    line's rise over the span, relative to where it starts."""
    if len(samples) < 2:
        return 0.0
    t = np.array([s["t_s"] for s in samples])
    rss = np.array([s["rss_mib"] for s in samples])
    slope, start = np.polyfit(t - t[0], rss, 1)
    return float(slope * (t[-1] - t[0]) / start)


def endpoint_growth(samples: Sequence[dict[str, float]]) -> float:
    """Growth from the first sample to the last (noisy: see the module docstring)."""
    if len(samples) < 2:
        return 0.0
    return (samples[-1]["rss_mib"] - samples[0]["rss_mib"]) / samples[0]["rss_mib"]


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


__all__ = ["endpoint_growth", "fitted_growth", "run_soak"]
