"""The API and the compactor as real processes on the same embedded PostgreSQL server.

Recalls through the API record accesses; the API flushes them as shards; the compactor leaves
them alone while they are younger than the one-minute lag, then folds them into merged.json and
deletes them — seen through both processes' /metrics. And SIGTERM flushes what is pending.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from mcp_types import TextContent

from shared.counters import COMPACTION_LAG_MS, COUNTER_LAYOUT
from tests.api._process import ApiProcess, clean_env, start
from tests.api.conftest import mcp_session

BIN = Path(sys.executable).parent
TENANT = "acme"


async def api_process(pg_url: str, **env: str) -> ApiProcess:
    process = await start(
        [str(BIN / "mcp-memory-api"), "--port", "0"],
        clean_env(DATABASE_URL=pg_url, EMBEDDING_PROVIDER="local", **env),
    )
    await process.wait_for("listening", timeout_s=60)
    return process


def api_base(process: ApiProcess) -> str:
    port = next(e for e in process.events if e.get("event") == "listening")["port"]
    return f"http://127.0.0.1:{port}"


async def remember_and_recall(base: str, *, recalls: int) -> str:
    headers = {"X-Memory-Tenant": TENANT}
    async with mcp_session(f"{base}/mcp", headers=headers) as client:
        stored = await client.call_tool(
            "remember", {"content": "Releases are cut on Thursdays after the freeze."}
        )
        assert isinstance(stored.content[0], TextContent)
        memory_id: str = re.findall(r"\[id:([0-9A-Z]{26})\]", stored.content[0].text)[0]
        for _ in range(recalls):
            result = await client.call_tool("recall", {"query": "When are releases cut?"})
            assert isinstance(result.content[0], TextContent)
            assert memory_id in result.content[0].text
    return memory_id


async def shard_keys(pg_url: str) -> list[str]:
    connection = await asyncpg.connect(pg_url)
    try:
        rows = await connection.fetch(
            "SELECT key FROM objects WHERE starts_with(key, $1) ORDER BY key",
            COUNTER_LAYOUT.shard_prefix(TENANT),
        )
        return [row["key"] for row in rows]
    finally:
        await connection.close()


async def body_of(pg_url: str, key: str) -> str | None:
    connection = await asyncpg.connect(pg_url)
    try:
        value: str | None = await connection.fetchval("SELECT body FROM objects WHERE key=$1", key)
        return value
    finally:
        await connection.close()


def metric(text: str, name: str) -> float:
    """Sum of every sample of ``name`` in a Prometheus text exposition."""
    pattern = re.compile(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.e+-]+)$", re.MULTILINE)
    return sum(float(value) for value in pattern.findall(text))


async def scrape(url: str) -> str:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200
        return await response.text()


async def test_sigterm_flushes_pending_counts(pg_url: str, processes: list[ApiProcess]) -> None:
    # A flush interval far beyond the test: only the final flush can write the shard.
    api = await api_process(pg_url, STATS_FLUSH_MS="3600000")
    processes.append(api)
    memory_id = await remember_and_recall(api_base(api), recalls=3)
    assert await shard_keys(pg_url) == []
    api.process.send_signal(signal.SIGTERM)
    assert await api.exit_code(timeout_s=30) == 0
    [shard] = await shard_keys(pg_url)
    body = await body_of(pg_url, shard)
    assert body is not None and f'"{memory_id}":{{"access":3,' in body.replace(" ", "")


@pytest.mark.timeout(240)
async def test_compactor_folds_the_api_backlog_only_behind_the_lag(
    pg_url: str, processes: list[ApiProcess]
) -> None:
    api = await api_process(pg_url, STATS_FLUSH_MS="200", STATS_COMPACT_THRESHOLD="1000")
    processes.append(api)
    compactor = await start(
        [str(BIN / "mcp-memory-compactor"), "--metrics-port", "0"],
        clean_env(DATABASE_URL=pg_url, COMPACTOR_FOLD_INTERVAL_S="1", COMPACTOR_GC_INTERVAL_S="2"),
    )
    processes.append(compactor)
    compactor_port = (await compactor.wait_for("listening", timeout_s=60))["metricsPort"]
    compactor_metrics = f"http://127.0.0.1:{compactor_port}/metrics"
    started = time.monotonic()

    # Several rounds of recalls, so several flushes: a backlog of more than one shard.
    memory_id = ""
    for _ in range(3):
        memory_id = await remember_and_recall(api_base(api), recalls=2)
        await asyncio.sleep(0.5)
    shards = await shard_keys(pg_url)
    assert len(shards) >= 2
    api_text = await scrape(f"{api_base(api)}/metrics")
    assert metric(api_text, "mcp_memory_tool_calls_total") >= 9

    # Younger than the lag: the compactor runs, but must not absorb anything yet.
    await asyncio.sleep(3)
    early = await scrape(compactor_metrics)
    assert metric(early, "mcp_memory_compactor_runs_total") >= 1
    assert metric(early, "mcp_memory_compactor_shards_folded_total") == 0
    assert metric(early, "mcp_memory_compactor_backlog_shards") >= len(shards)
    assert await body_of(pg_url, COUNTER_LAYOUT.merged_key(TENANT)) is None

    # Past the lag, the same shards are folded into merged.json and deleted. Every shard was
    # stamped after `started`, so a fold seen sooner than a lag after it came too early.
    lag_s = COMPACTION_LAG_MS / 1000
    while True:
        late = await scrape(compactor_metrics)
        folded = metric(late, "mcp_memory_compactor_shards_folded_total")
        waited_s = time.monotonic() - started
        assert folded == 0 or waited_s >= lag_s, f"a shard was folded after {waited_s:.1f} s"
        if folded >= len(shards) or waited_s > lag_s + 30:
            break
        await asyncio.sleep(0.5)
    assert metric(late, "mcp_memory_compactor_shards_folded_total") >= len(shards)
    assert metric(late, "mcp_memory_compactor_shards_deleted_total") >= len(shards)
    merged = await body_of(pg_url, COUNTER_LAYOUT.merged_key(TENANT))
    assert merged is not None and memory_id in merged
    assert not set(shards) & set(await shard_keys(pg_url))
    # The API still reads every count: 3 rounds x 2 recalls of the last memory id.
    headers = {"X-Memory-Tenant": TENANT}
    async with mcp_session(f"{api_base(api)}/mcp", headers=headers) as client:
        listed = await client.call_tool("list_memories", {})
    assert isinstance(listed.content[0], TextContent) and memory_id in listed.content[0].text
