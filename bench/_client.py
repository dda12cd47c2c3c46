"""The official MCP client over Streamable HTTP, and closed-loop load at a given concurrency.

Each worker is one client (``mcp.Client`` over ``streamable_http_client`` with its own
``httpx2.AsyncClient`` carrying the tenant header), as separate agents would be. Workers pull
calls from one shared list until it is empty; latency is measured around ``call_tool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx2
import mcp_types as types
import numpy as np
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ID_PATTERN: Final = re.compile(r"\[id:([0-9A-Z]{26})\]")
Call = tuple[str, dict[str, Any]]


@contextlib.asynccontextmanager
async def session(url: str, tenant: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"X-Memory-Tenant": tenant}, timeout=120) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            yield client


class ToolCallError(RuntimeError):
    pass


def text_of(result: types.CallToolResult) -> str:
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    return "\n".join(texts)


async def call_text(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    text = text_of(result)
    if result.is_error:
        raise ToolCallError(f"{tool} answered with an error: {text[:300]}")
    return text


def ids_in(text: str) -> list[str]:
    return ID_PATTERN.findall(text)


@dataclass(frozen=True)
class Recalled:
    """What a recall answer says, parsed from the text the model reads."""

    ids: list[str]
    confidence: str  # high, medium, low, no_match, not_confident


def parse_recall(text: str) -> Recalled:
    if "NO MATCH FOUND" in text:
        confidence = "no_match"
    elif "NO CONFIDENT MATCH" in text:
        confidence = "not_confident"
    elif "HIGH CONFIDENCE:" in text:
        confidence = "high"
    elif "MEDIUM CONFIDENCE:" in text:
        confidence = "medium"
    elif "LOW CONFIDENCE:" in text:
        confidence = "low"
    else:
        raise ValueError(f"unrecognised recall answer: {text[:200]}")
    return Recalled(ids=ids_in(text), confidence=confidence)


@dataclass(frozen=True)
class Latency:
    n: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        ms = np.asarray(seconds, dtype=np.float64) * 1000
        p50, p95, p99 = np.percentile(ms, [50, 95, 99])
        return cls(
            n=len(ms),
            p50_ms=round(float(p50), 2),
            p95_ms=round(float(p95), 2),
            p99_ms=round(float(p99), 2),
            mean_ms=round(float(ms.mean()), 2),
            max_ms=round(float(ms.max()), 2),
        )


@dataclass(frozen=True)
class LoadResult:
    latency: Latency
    wall_s: float
    throughput_per_s: float
    client_cpu_s: float
    answers: list[str]
    # Every call's seconds, in call order: what pooled percentiles over several loads need.
    seconds: list[float]


async def run_load(
    url: str,
    tenant: str,
    calls: Sequence[Call],
    *,
    concurrency: int,
    warmup: Sequence[Call] = (),
) -> LoadResult:
    """Run ``calls`` through ``concurrency`` clients; each client first runs one warm-up call
    (not timed) so connection set-up is not counted.

    The runner's own heap (imports, the preloaded texts and vectors, its in-process stores) is
    collected and frozen first: a full collection over it took 100-220 ms in this process and
    landed in whichever call was in flight, a pause no agent's client would have. The clients'
    own garbage is still collected as usual, inside the measured window.
    """
    gc.collect()
    gc.freeze()
    latencies: list[float] = [0.0] * len(calls)
    answers: list[str] = [""] * len(calls)
    cursor = iter(range(len(calls)))
    ready = asyncio.Barrier(concurrency + 1)
    finished = asyncio.Semaphore(0)
    release = asyncio.Event()

    async def worker(number: int) -> None:
        async with session(url, tenant) as client:
            if warmup:
                tool, arguments = warmup[number % len(warmup)]
                await call_text(client, tool, arguments)
            await ready.wait()
            for index in cursor:
                tool, arguments = calls[index]
                started = time.perf_counter()
                answers[index] = await call_text(client, tool, arguments)
                latencies[index] = time.perf_counter() - started
            finished.release()
            # Sessions close after the clock stops, not inside the measured window.
            await release.wait()

    tasks = [asyncio.create_task(worker(i)) for i in range(concurrency)]
    try:
        await _unless_failed(ready.wait(), tasks)
        cpu_started, started = time.process_time(), time.perf_counter()
        for _ in range(concurrency):
            await _unless_failed(finished.acquire(), tasks)
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
    finally:
        release.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        raise errors[0]
    return LoadResult(
        latency=Latency.of(latencies),
        wall_s=round(wall, 3),
        throughput_per_s=round(len(calls) / wall, 2),
        client_cpu_s=cpu,
        answers=answers,
        seconds=latencies,
    )


async def _unless_failed(step: Awaitable[object], tasks: Sequence[asyncio.Task[None]]) -> None:
    """Await ``step``, but raise at once if a worker fails meanwhile (it would never arrive)."""
    waiter = asyncio.ensure_future(step)
    await asyncio.wait({waiter, *tasks}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise RuntimeError("a load worker failed") from task.exception()
        raise RuntimeError("a load worker stopped early")


__all__ = [
    "Call",
    "Latency",
    "LoadResult",
    "Recalled",
    "ToolCallError",
    "call_text",
    "ids_in",
    "parse_recall",
    "run_load",
    "session",
]
