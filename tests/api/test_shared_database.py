"""One embedded PostgreSQL for every local process of a data dir, held by one keeper: stdio
servers and the CLI use it at once, a server killed outright costs the others nothing, and the
database outlives the last process by its grace, then stops. Real processes throughout."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.errors import StorageUnavailableError
from shared.storage.postgres.embedded import (
    KEEPER_MODULE,
    embedded_database,
    keeper_log_path,
    keeper_socket_path,
    pgdata_path,
)
from shared.storage.postgres.embedded_watch import server_alive
from shared.storage.postgres.keeper import FIRST_USER_WAIT_S
from tests.api._process import clean_env
from tests.api._stdio_process import BOOT_TIMEOUT_S, stdio_server

GRACE_S = 3
CLI = Path(sys.executable).parent / "mcp-memory"


def postmaster(data_dir: Path) -> int:
    return int((pgdata_path(data_dir) / "postmaster.pid").read_text().split("\n", 1)[0])


def keepers(data_dir: Path) -> list[int]:
    """The pids of the processes keeping the embedded server in ``data_dir``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if KEEPER_MODULE.encode() in argv and str(data_dir).encode() in argv:
            found.append(int(cmdline.parent.name))
    return found


def starts(data_dir: Path) -> int:
    """How many times a keeper started (or joined, within its process) the server."""
    lines = keeper_log_path(data_dir).read_text().splitlines()
    return sum(json.loads(line).get("event") == "embedded_postgres_ready" for line in lines)


async def until_stopped(data_dir: Path, *, within_s: float) -> float:
    """Seconds until neither the server nor a keeper runs; fails after ``within_s``."""
    started = time.monotonic()
    while server_alive(data_dir) or keepers(data_dir):
        assert time.monotonic() - started < within_s, "the database or its keeper still runs"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


def export(data_dir: Path, **env: str) -> list[str]:
    done = subprocess.run(
        [str(CLI), "export", "--local", "--data-dir", str(data_dir), "--tenant", "laptop"],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=BOOT_TIMEOUT_S,
        check=True,
    )
    return [json.loads(line)["content"] for line in done.stdout.splitlines()]


async def test_servers_and_the_cli_share_one_database_which_outlives_the_last_by_its_grace(
    embedded_data_dir: Path,
) -> None:
    args = ["--local", "--data-dir", str(embedded_data_dir)]
    env = {"MCP_MEMORY_TENANT": "laptop", "PG_EMBEDDED_GRACE_S": str(GRACE_S)}
    async with stdio_server(args, **env) as first, stdio_server(args, **env) as second:
        await asyncio.gather(first.handshake(), second.handshake())
        _, _, failed = await first.call(
            "remember", {"content": "The staging database lives on db-stage-2."}
        )
        assert not failed
        _, _, failed = await second.call(
            "remember", {"content": "Deploy freezes start on Thursdays at noon."}
        )
        assert not failed
        server = postmaster(embedded_data_dir)
        exported = await asyncio.to_thread(export, embedded_data_dir, **env)
        assert sorted(exported) == [
            "Deploy freezes start on Thursdays at noon.",
            "The staging database lives on db-stage-2.",
        ]

        first.process.kill()  # SIGKILL: no exit hook runs
        await first.process.wait()
        _, text, failed = await second.call(
            "recall", {"query": "where does the staging database live"}
        )
        assert not failed and "db-stage-2" in text
        assert await second.leave() == 0

    # The last process has left: the server waits out the grace for the next one.
    assert server_alive(embedded_data_dir) and postmaster(embedded_data_dir) == server
    async with stdio_server(args, **env) as third:
        await third.handshake()
        _, text, _ = await third.call("recall", {"query": "when do deploy freezes start"})
        assert "Thursdays at noon" in text
        assert postmaster(embedded_data_dir) == server  # joined, not started again
        assert await third.leave() == 0

    waited = await until_stopped(embedded_data_dir, within_s=GRACE_S + 20)
    assert waited > GRACE_S - 1, f"stopped {waited:.1f} s after the last left"
    assert starts(embedded_data_dir) == 1
    assert not keeper_socket_path(embedded_data_dir).exists()


async def test_servers_starting_at_once_start_one_database(embedded_data_dir: Path) -> None:
    args = ["--local", "--data-dir", str(embedded_data_dir)]
    async with (
        stdio_server(args, MCP_MEMORY_TENANT="laptop") as one,
        stdio_server(args, MCP_MEMORY_TENANT="laptop") as two,
        stdio_server(args, MCP_MEMORY_TENANT="desk") as three,
    ):
        servers = (one, two, three)
        await asyncio.gather(*(s.handshake() for s in servers))
        answers = await asyncio.gather(*(s.call("memory_stats", {}) for s in servers))
        assert [failed for _, _, failed in answers] == [False, False, False]
        # Keepers started in the race answer that one serves, and leave.
        deadline = time.monotonic() + 10
        while len(keepers(embedded_data_dir)) > 1:
            assert time.monotonic() < deadline, keepers(embedded_data_dir)
            await asyncio.sleep(0.05)
        assert len(keepers(embedded_data_dir)) == 1
        assert [await s.leave() for s in servers] == [0, 0, 0]
    assert starts(embedded_data_dir) == 1
    # No grace here (the suite's PG_EMBEDDED_GRACE_S=0): the last one out stopped the server
    # on its way out; its keeper, its work done, exits a moment later.
    assert not server_alive(embedded_data_dir)
    await until_stopped(embedded_data_dir, within_s=10)


async def test_a_keeper_asked_to_stop_stops_the_server(embedded_data_dir: Path) -> None:
    """Whatever the resident the leaving server started is doing meanwhile (still opening its
    runtime on a loaded machine, or serving), it never brings the database back."""
    args = ["--local", "--data-dir", str(embedded_data_dir)]
    async with stdio_server(args, MCP_MEMORY_TENANT="laptop", PG_EMBEDDED_GRACE_S="600") as one:
        await one.handshake()
        await one.call("memory_stats", {})
        assert await one.leave() == 0
    (keeper,) = keepers(embedded_data_dir)
    assert server_alive(embedded_data_dir)
    os.kill(keeper, signal.SIGTERM)  # a machine shutting down: well before the grace is out
    await until_stopped(embedded_data_dir, within_s=30)
    await asyncio.sleep(3)  # a resident late to join would have started a keeper by now
    assert not server_alive(embedded_data_dir) and not keepers(embedded_data_dir)
    assert starts(embedded_data_dir) == 1


async def test_a_process_that_only_joins_starts_no_database(embedded_data_dir: Path) -> None:
    with pytest.raises(StorageUnavailableError, match="only joins a running one"):
        async with embedded_database(embedded_data_dir, start=False):
            pass
    assert not server_alive(embedded_data_dir) and not keepers(embedded_data_dir)
    # Once a keeper serves, it joins like any other process.
    async with (
        embedded_database(embedded_data_dir, grace_s=0),
        embedded_database(embedded_data_dir, start=False) as url,
    ):
        assert url.startswith("postgres")
    await until_stopped(embedded_data_dir, within_s=30)


async def test_the_last_to_leave_sets_the_grace(embedded_data_dir: Path) -> None:
    """A process leaving with a long grace leaves the server up; the next one, leaving with
    none, stops it on its way out, whatever grace the keeper had waited on before."""
    async with embedded_database(embedded_data_dir, grace_s=600):
        pass
    assert server_alive(embedded_data_dir)
    async with embedded_database(embedded_data_dir, grace_s=0):
        assert server_alive(embedded_data_dir)
    assert not server_alive(embedded_data_dir)
    await until_stopped(embedded_data_dir, within_s=10)
    assert starts(embedded_data_dir) == 1


async def test_a_first_user_leaving_at_once_with_no_grace_stops_the_server_at_once(
    embedded_data_dir: Path,
) -> None:
    """The wait for a first user (the starter's time to connect) ends with that user: one that
    leaves before the keeper has looked again is not waited for."""
    started = time.monotonic()
    async with embedded_database(embedded_data_dir, grace_s=0):
        pass
    assert not server_alive(embedded_data_dir)
    assert time.monotonic() - started < FIRST_USER_WAIT_S
