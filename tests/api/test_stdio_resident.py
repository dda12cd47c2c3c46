"""The data dir's resident: a stdio server leaving within a grace leaves one behind, and later
stdio servers of the same configuration relay to it, each with its own tenant; one of another
configuration serves itself; the resident leaves once idle for the grace, and the database
with it. Real processes throughout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.api.stdio.sharing import (
    RESIDENT_LOG_MAX_BYTES,
    resident_log_path,
    resident_socket_path,
    start_resident,
    stop_resident,
)
from shared.storage.postgres.embedded import embedded_database
from shared.storage.postgres.embedded_watch import server_alive
from tests.api._stdio_process import stdio_server
from tests.api.test_shared_database import keepers

GRACE_S = 3
RESIDENT_START_S = 60.0


async def resident_listening(data_dir: Path) -> None:
    """Wait for the resident a leaving server started to bind its socket."""
    deadline = time.monotonic() + RESIDENT_START_S
    while not resident_socket_path(data_dir).exists():
        assert time.monotonic() < deadline, "no resident started"
        await asyncio.sleep(0.05)


def relayed(server_logs: list[tuple[float, dict[str, object]]]) -> bool:
    return any(line.get("event") == "stdio_relayed" for _, line in server_logs)


async def stop_everything(data_dir: Path) -> None:
    assert await asyncio.to_thread(stop_resident, data_dir)
    async with embedded_database(data_dir, grace_s=0):
        pass


@pytest.fixture
async def resident_data_dir(embedded_data_dir: Path) -> AsyncIterator[Path]:
    """A data dir a stdio server left a resident in (its grace 600 s), stopped after the test
    with the database."""
    args = ["--local", "--data-dir", str(embedded_data_dir)]
    async with stdio_server(args, MCP_MEMORY_TENANT="laptop", PG_EMBEDDED_GRACE_S="600") as one:
        await one.handshake()
        assert await one.leave() == 0
    await resident_listening(embedded_data_dir)
    try:
        yield embedded_data_dir
    finally:
        await stop_everything(embedded_data_dir)


async def test_respawned_servers_are_served_by_the_resident_until_it_is_idle(
    embedded_data_dir: Path,
) -> None:
    args = ["--local", "--data-dir", str(embedded_data_dir)]
    env = {"PG_EMBEDDED_GRACE_S": str(GRACE_S)}
    async with stdio_server(args, MCP_MEMORY_TENANT="laptop", **env) as first:
        await first.handshake()
        _, _, failed = await first.call(
            "remember", {"content": "The staging database lives on db-stage-2."}
        )
        assert not failed and not relayed(first.logs)
        assert await first.leave() == 0
    await resident_listening(embedded_data_dir)

    async with (
        stdio_server(args, MCP_MEMORY_TENANT="laptop", **env) as laptop,
        stdio_server(args, MCP_MEMORY_TENANT="desk", **env) as desk,
    ):
        await asyncio.gather(laptop.handshake(), desk.handshake())
        assert relayed(laptop.logs) and relayed(desk.logs)
        _, text, failed = await laptop.call(
            "recall", {"query": "where does the staging database live"}
        )
        assert not failed and "db-stage-2" in text
        # Each relay is its own tenant: the desk's project holds nothing of the laptop's.
        _, text, failed = await desk.call("list_memories", {})
        assert not failed and "db-stage-2" not in text

        laptop.process.kill()  # SIGKILL: the resident sees its connection end, nothing else
        await laptop.process.wait()
        _, _, failed = await desk.call("remember", {"content": "The desk's printer is on lp-3."})
        assert not failed
        _, text, _ = await desk.call("recall", {"query": "which printer does the desk use"})
        assert "lp-3" in text
        assert await desk.leave() == 0

    # Idle for the grace, the resident leaves, and the database stops with it.
    started = time.monotonic()
    while server_alive(embedded_data_dir) or keepers(embedded_data_dir):
        assert time.monotonic() - started < GRACE_S + 30, "the resident or database still runs"
        await asyncio.sleep(0.1)
    assert time.monotonic() - started > GRACE_S - 1
    assert not resident_socket_path(embedded_data_dir).exists()


async def test_a_server_of_another_configuration_serves_itself(resident_data_dir: Path) -> None:
    args = ["--local", "--data-dir", str(resident_data_dir)]
    async with stdio_server(
        args, MCP_MEMORY_TENANT="laptop", PG_EMBEDDED_GRACE_S="600", RECALL_MIN_SIMILARITY="0.5"
    ) as other:
        await other.handshake()
        _, _, failed = await other.call("memory_stats", {})
        assert not failed and not relayed(other.logs)
        # The resident its leaving starts gives way to the one already serving.
        assert await other.leave() == 0


async def test_a_relay_with_a_malformed_tenant_is_refused_as_a_server_would_refuse_it(
    resident_data_dir: Path,
) -> None:
    args = ["--local", "--data-dir", str(resident_data_dir)]
    async with stdio_server(
        args, MCP_MEMORY_TENANT="not a tenant!", PG_EMBEDDED_GRACE_S="600"
    ) as bad:
        assert await bad.leave() == 1
        assert any("configuration error" in line for line in bad.plain), bad.plain
        assert any("MCP_MEMORY_TENANT" in line for line in bad.plain), bad.plain


async def test_a_relay_whose_resident_stops_exits_1(resident_data_dir: Path) -> None:
    args = ["--local", "--data-dir", str(resident_data_dir)]
    env = {"MCP_MEMORY_TENANT": "laptop", "PG_EMBEDDED_GRACE_S": "600"}
    async with stdio_server(args, **env) as relay:
        await relay.handshake()
        assert relayed(relay.logs)
        assert await asyncio.to_thread(stop_resident, resident_data_dir)
        # The client starts a server again, as it does when a server dies.
        assert await asyncio.wait_for(relay.process.wait(), 30) == 1


def test_a_full_resident_log_is_set_aside_when_the_next_resident_starts(tmp_path: Path) -> None:
    log = resident_log_path(tmp_path)
    log.write_bytes(b"x" * (RESIDENT_LOG_MAX_BYTES + 1))
    # The suite's PG_EMBEDDED_GRACE_S=0: the resident started here gives way at once.
    start_resident(tmp_path)
    aside = log.with_name(log.name + ".1")
    assert aside.stat().st_size == RESIDENT_LOG_MAX_BYTES + 1
    assert not log.exists() or log.stat().st_size < RESIDENT_LOG_MAX_BYTES
