"""Under ``--local`` the API exits non-zero when its embedded PostgreSQL dies, instead of
answering every call with "connection refused" for as long as it runs: what supervises it (a
terminal, systemd, a container runtime) restarts it, and the restart starts the server again.
A real kill -9 of the real postmaster."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from shared.storage.postgres.embedded import pgdata_path
from tests.api._process import CONSOLE_SCRIPT, clean_env, start, stop


async def test_the_api_exits_1_when_its_embedded_postgres_is_killed(
    embedded_data_dir: Path,
) -> None:
    api = await start(
        [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(embedded_data_dir), "--port", "0"],
        clean_env(),
    )
    try:
        await api.wait_for("listening")
        pid = int((pgdata_path(embedded_data_dir) / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        assert await api.exit_code(timeout_s=30) == 1
        assert time.monotonic() - killed < 30
        assert "embedded_postgres_died" in api.names()
    finally:
        await stop(api)

    # Started again on the same data dir, it serves: the restart is the recovery.
    again = await start(
        [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(embedded_data_dir), "--port", "0"],
        clean_env(),
    )
    try:
        await again.wait_for("listening")
        again.process.send_signal(signal.SIGTERM)
        assert await again.exit_code(timeout_s=30) == 0
    finally:
        await stop(again)


async def test_the_compactor_exits_1_when_its_embedded_postgres_is_killed(
    embedded_data_dir: Path,
) -> None:
    compactor = await start(
        [
            str(CONSOLE_SCRIPT.parent / "mcp-memory-compactor"),
            "--local",
            "--data-dir",
            str(embedded_data_dir),
            "--metrics-port",
            "0",
        ],
        clean_env(),
    )
    try:
        await compactor.wait_for("listening")
        pid = int((pgdata_path(embedded_data_dir) / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        assert await compactor.exit_code(timeout_s=30) == 1
        assert "embedded_postgres_died" in compactor.names()
    finally:
        await stop(compactor)


async def test_a_stdio_server_exits_1_when_its_embedded_postgres_is_killed(
    embedded_data_dir: Path,
) -> None:
    # stdin stays open (a client that says nothing): only the database's death ends it.
    api = await start(
        [str(CONSOLE_SCRIPT), "--stdio", "--local", "--data-dir", str(embedded_data_dir)],
        clean_env(MCP_MEMORY_TENANT="laptop"),
        stdin=True,
    )
    try:
        await api.wait_for("serving_stdio")
        pid = int((pgdata_path(embedded_data_dir) / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)
        assert await api.exit_code(timeout_s=30) == 1
        assert "embedded_postgres_died" in api.names()
    finally:
        await stop(api)
