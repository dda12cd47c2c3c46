"""The compactor as a real process: it folds and deletes shards behind the lag, reports it on
/metrics, and exits 0 on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

from shared.config import load_config
from shared.counters import COUNTER_LAYOUT
from shared.counters.reader import read_merged
from shared.model import Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.model.keys import EXPIRY_ROOT, expiry_key_of
from shared.storage import ObjectStore, Stores, open_stores
from tests.counters.test_tracker import LAG_MS, write_old_shards

SHARDS = 7
DAY_MS = 86_400_000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def pg_stores(pg_url: str) -> AsyncIterator[Stores]:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as stores:
        yield stores


@pytest.fixture
def pg_objects(pg_stores: Stores) -> ObjectStore:
    return pg_stores.objects


async def start_compactor(pg_url: str, port: int, **settings: str) -> asyncio.subprocess.Process:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("COMPACTOR_", "METRICS_"))},
        "DATABASE_URL": pg_url,
        "METRICS_PORT": str(port),
        **settings,
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from services.compactor.main import main; main()",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop(process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    return await asyncio.wait_for(process.communicate(), timeout=30)


def metric(exposition: str, name: str) -> float | None:
    match = re.search(rf"^{re.escape(name)} (\S+)$", exposition, re.MULTILINE)
    return None if match is None else float(match.group(1))


async def scrape(session: aiohttp.ClientSession, port: int) -> str | None:
    try:
        async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
            return await response.text()
    except aiohttp.ClientConnectionError:
        return None


async def test_compactor_process_folds_old_shards_and_reports_it(
    pg_url: str, pg_objects: ObjectStore
) -> None:
    # The process folds by the wall clock, so these shards are stamped two lags before it.
    now_ms = time.time_ns() // 1_000_000
    await write_old_shards(pg_objects, "acme", count=SHARDS, at_ms=now_ms - 2 * LAG_MS)
    await write_old_shards(pg_objects, "young", count=2, at_ms=now_ms)
    port = free_port()
    process = await start_compactor(
        pg_url, port, COMPACTOR_FOLD_INTERVAL_S="0.2", COMPACTOR_GC_INTERVAL_S="0.5"
    )
    try:
        exposition = ""
        async with aiohttp.ClientSession() as session:
            for _ in range(300):
                exposition = await scrape(session, port) or ""
                if metric(exposition, "mcp_memory_compactor_shards_folded_total") == SHARDS:
                    break
                await asyncio.sleep(0.1)
            async with session.get(f"http://127.0.0.1:{port}/health") as response:
                assert response.status == 200
        assert metric(exposition, "mcp_memory_compactor_shards_folded_total") == SHARDS
        assert metric(exposition, 'mcp_memory_compactor_shards_deleted_total{job="fold"}') == SHARDS
        assert metric(exposition, "mcp_memory_compactor_backlog_shards") == 2
        assert metric(exposition, "mcp_memory_compactor_backlog_largest_tenant_shards") == 2
        success = metric(
            exposition, 'mcp_memory_compactor_last_success_timestamp_seconds{job="fold"}'
        )
        assert success is not None and success > 0
        assert (await read_merged(pg_objects, "acme")).merged.counts["m"].access == SHARDS
        assert await pg_objects.list(COUNTER_LAYOUT.shard_prefix("acme")) == []
        assert len(await pg_objects.list(COUNTER_LAYOUT.shard_prefix("young"))) == 2
    finally:
        stdout, stderr = await stop(process)
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert b'"shutdown_complete"' in stdout


def memory_at(created_ms: int, *, expires_in_ms: int | None) -> Memory:
    return Memory(
        id=new_ulid(created_ms),
        tenant="acme",
        content="The release freeze lasts until the audit ends.",
        created_at=iso_ms(created_ms),
        expires_at=None if expires_in_ms is None else iso_ms(created_ms + expires_in_ms),
    )


async def test_compactor_process_deletes_expired_memories_and_counts_them(
    pg_url: str, pg_stores: Stores
) -> None:
    # The process judges expiry by the wall clock: one memory expired yesterday.
    now_ms = time.time_ns() // 1_000_000
    expired = memory_at(now_ms - 2 * DAY_MS, expires_in_ms=DAY_MS)
    later = memory_at(now_ms, expires_in_ms=DAY_MS)
    lasting = memory_at(now_ms, expires_in_ms=None)
    for memory in (expired, later, lasting):
        for key in (index_key(memory), expiry_key_of(memory)):
            if key is not None:
                await pg_stores.objects.put(key, "")
        await pg_stores.vectors.put(memory, [1.0, 0.0, 0.0])
    port = free_port()
    process = await start_compactor(pg_url, port, COMPACTOR_EXPIRE_INTERVAL_S="0.2")
    try:
        exposition = ""
        async with aiohttp.ClientSession() as session:
            for _ in range(300):
                exposition = await scrape(session, port) or ""
                if metric(exposition, "mcp_memory_compactor_expired_deleted_total") == 1:
                    break
                await asyncio.sleep(0.1)
        assert metric(exposition, "mcp_memory_compactor_expired_deleted_total") == 1
        assert metric(exposition, 'mcp_memory_compactor_runs_total{job="expire",result="ok"}')
    finally:
        stdout, stderr = await stop(process)
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert b'"job": "expire"' in stdout
    ids = [expired.id, later.id, lasting.id]
    assert {m.id for m in await pg_stores.vectors.get("acme", ids)} == {later.id, lasting.id}
    assert await pg_stores.objects.list(EXPIRY_ROOT) == [expiry_key_of(later)]
    assert set(await pg_stores.objects.list(index_prefix("acme"))) == {
        index_key(later),
        index_key(lasting),
    }


async def test_compactor_refuses_a_bad_configuration() -> None:
    process = await start_compactor(
        "postgres://nowhere/x", free_port(), COMPACTOR_FOLD_INTERVAL_S="0"
    )
    _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 1
    assert stderr.decode().startswith("configuration error: COMPACTOR_FOLD_INTERVAL_S")
