"""The embedded default: a real PostgreSQL in a data dir, shared, stopped by its last user."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.config import load_config
from shared.errors import StorageUnavailableError
from shared.storage import open_stores
from shared.storage.postgres.embedded import keeper_log_path, pgdata_path, start_early
from tests.storage.postgres._boot import boot_env

HOLDER_SCRIPT = """
import asyncio, sys
from pathlib import Path
from shared.config import load_config
from shared.storage import open_stores

async def main():
    config = load_config({}, local=True, data_dir=Path(sys.argv[1]))
    async with open_stores(config) as stores:
        await stores.objects.put("from-holder", "hello")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)

asyncio.run(main())
"""


def _running(data_dir: Path) -> bool:
    return (pgdata_path(data_dir) / "postmaster.pid").exists()


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


async def test_data_persists_across_restarts_and_the_server_stops_after_its_last_user(
    embedded_data_dir: Path,
) -> None:
    config = load_config({}, local=True, data_dir=embedded_data_dir)
    async with open_stores(config) as stores:
        assert stores.description == f"embedded postgres at {embedded_data_dir}"
        await stores.objects.put("k", "survives a restart")
        assert _running(embedded_data_dir)
    assert not _running(embedded_data_dir)

    # A user that died without its exit hooks (SIGKILL) must not keep the server up forever.
    (pgdata_path(embedded_data_dir) / ".handle_pids.json").write_text(json.dumps([_dead_pid()]))
    async with open_stores(config) as stores:
        stored = await stores.objects.get("k")
        assert stored is not None and stored.body == "survives a restart"
    assert not _running(embedded_data_dir)


async def test_two_processes_share_one_data_dir_and_the_last_one_stops_it(
    embedded_data_dir: Path,
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, str(embedded_data_dir)],
        env=boot_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "READY"
        config = load_config({}, local=True, data_dir=embedded_data_dir)
        async with open_stores(config) as stores:
            stored = await stores.objects.get("from-holder")
            assert stored is not None and stored.body == "hello"
        assert _running(embedded_data_dir), "closing one user stopped a server still in use"
    finally:
        _, stderr = holder.communicate(input="\n", timeout=60)
    assert holder.returncode == 0, stderr
    assert not _running(embedded_data_dir)


async def test_a_keeper_started_early_is_the_one_joined_and_stops_with_its_last_user(
    embedded_data_dir: Path,
) -> None:
    """A process starts the database before it has imported the rest of itself; opening the
    stores then joins that keeper rather than racing it with a second start."""
    start_early(embedded_data_dir, grace_s=0.0)
    start_early(embedded_data_dir, grace_s=0.0)  # a second call starts nothing more
    # The server comes up on its own, before anything joins it.
    deadline = time.monotonic() + 60
    while not _running(embedded_data_dir):
        assert time.monotonic() < deadline, "the early start started no server"
        await asyncio.sleep(0.05)
    config = load_config({}, local=True, data_dir=embedded_data_dir)
    async with open_stores(config) as stores:
        await stores.objects.put("early", "joined")
        assert _running(embedded_data_dir)
    assert not _running(embedded_data_dir)
    events = [json.loads(line)["event"] for line in keeper_log_path(embedded_data_dir).open()]
    assert events.count("embedded_postgres_ready") == 1, events
    # A start that failed is no start: the join starts the keeper itself, and says why not.
    blocker = embedded_data_dir / "a-file"
    blocker.write_text("not a directory")
    start_early(blocker / "data", grace_s=0.0)
    broken = load_config({}, local=True, data_dir=blocker / "data")
    with pytest.raises(StorageUnavailableError, match=f"embedded postgres at {blocker}/data"):
        async with open_stores(broken):
            pass


async def test_a_data_dir_that_cannot_be_created_is_unavailable_and_named(
    embedded_data_dir: Path,
) -> None:
    blocker = embedded_data_dir / "a-file"
    blocker.write_text("not a directory")
    config = load_config({}, local=True, data_dir=blocker / "data")
    with pytest.raises(StorageUnavailableError, match=f"embedded postgres at {blocker}/data"):
        async with open_stores(config):
            pass


async def test_the_embedded_servers_log_never_carries_a_failed_statement_or_its_values(
    embedded_data_dir: Path,
) -> None:
    """PostgreSQL logs the statement of every error by default. A statement that fails on
    purpose, carrying a recognisable value, must leave neither in <data_dir>/postgres/log."""
    import asyncpg

    config = load_config({}, local=True, data_dir=embedded_data_dir)
    marker = "secret-memory-content-7f3a"
    async with open_stores(config) as stores:
        del stores
        from shared.storage.postgres.embedded import acquire_server, release_server

        url = acquire_server(embedded_data_dir)
        try:
            connection = await asyncpg.connect(url)
            try:
                settings = {
                    row["name"]: row["setting"]
                    for row in await connection.fetch(
                        "SELECT name, setting FROM pg_settings WHERE name LIKE 'log_%'"
                    )
                }
                with pytest.raises(asyncpg.PostgresError):
                    await connection.execute(
                        f"INSERT INTO objects (key, body, version) VALUES ('{marker}', $1, 'x')",
                        marker,
                    )
            finally:
                await connection.close()
        finally:
            release_server(embedded_data_dir)
    assert settings["log_min_error_statement"] == "panic"
    assert settings["log_parameter_max_length_on_error"] == "0"
    logs = "".join(
        path.read_text(errors="replace")
        for path in pgdata_path(embedded_data_dir).rglob("*")
        if path.is_file() and (path.suffix == ".log" or path.name == "log")
    )
    assert "invalid input syntax" in logs  # the error itself is logged ...
    assert marker not in logs  # ... but not what the statement carried
