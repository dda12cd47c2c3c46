"""The API as a real process: boot refusals, the boot log, and graceful shutdown on signals.

Most cases run ``services.api.main.run`` with the test catalogue's runtime
(``tests/api/_serve_test_runtime.py``), whose exit stands in for the final counter flush; the
boot refusals run the installed ``mcp-memory-api`` console script itself, and one case boots it
on the real runtime against a PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from services.api.main import SHUTDOWN_GRACE_S
from tests.api._process import BOOT_TIMEOUT_S, CONSOLE_SCRIPT, ApiProcess, clean_env, start
from tests.api.conftest import mcp_session
from tests.api.test_tools_e2e import s3_environ


@pytest.fixture
async def served() -> AsyncIterator[tuple[ApiProcess, str]]:
    """The test-runtime server on a free port, with a 1 s stand-in for the final flush."""
    env = clean_env(DATABASE_URL="postgresql://unused/none", TEST_RUNTIME_EXIT_S="1.0")
    api = await start(
        [sys.executable, "-m", "tests.api._serve_test_runtime", "serve", "--port", "0"], env
    )
    try:
        listening = await api.wait_for("listening")
        yield api, f"http://127.0.0.1:{listening['port']}"
    finally:
        if api.process.returncode is None:
            api.process.kill()
            await api.process.wait()


def assert_boot_log(api: ApiProcess) -> None:
    listening = next(event for event in api.events if event["event"] == "listening")
    assert listening["server"] == "mcp-memory"
    assert "/mcp" in listening["endpoint"]
    assert [e["detail"] for e in api.events if e["event"] == "boot"] == [
        "store: test catalogue (no storage)"
    ]
    auth = next(event for event in api.events if event["event"] == "auth")
    assert auth["level"] == "warning" and auth["mode"] == "open"
    if platform.libc_ver()[0] == "glibc":
        tuned = next(event for event in api.events if event["event"] == "allocator_tuned")
        assert tuned["settings"]["MALLOC_ARENA_MAX"] == 2
    assert "answers any caller that can reach it" in auth["detail"]
    # What boot left alive is frozen out of the collector's walks (the real runtime: 122,522).
    frozen = next(event for event in api.events if event["event"] == "boot_objects_frozen")
    assert frozen["objects"] > 50_000


async def test_sigterm_finishes_in_flight_calls_then_flushes_and_exits_0(
    served: tuple[ApiProcess, str],
) -> None:
    api, base = served
    await api.wait_for("auth")
    assert_boot_log(api)
    # Raw HTTP, not the SDK client: after a call the client lists the tools again, and that
    # follow-up would (rightly) find the listener closed.
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    call["params"] = {"name": "slow", "arguments": {"seconds": 1.5}}
    async with aiohttp.ClientSession(headers={"X-Tenant-Id": "t"}) as http:
        in_flight = asyncio.create_task(http.post(f"{base}/mcp", json=call))
        await asyncio.sleep(0.4)
        signalled = time.monotonic()
        api.process.send_signal(signal.SIGTERM)
        await api.wait_for("shutdown_started", timeout_s=2)
        # The listener is closed: a new connection is refused while the call is still running.
        with pytest.raises(aiohttp.ClientConnectionError):
            async with aiohttp.ClientSession() as fresh:
                await fresh.get(f"{base}/health")
        response = await in_flight
        answer = await response.json()
    assert response.status == 200
    assert answer["result"]["content"][0]["text"] == "slept 1.5"
    assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    assert time.monotonic() - signalled < SHUTDOWN_GRACE_S
    names = api.names()
    assert names.index("shutdown_started") < names.index("test_runtime_flushed")
    assert names.index("test_runtime_flushed") < names.index("shutdown_complete")


async def test_a_second_signal_does_not_interrupt_the_flush(
    served: tuple[ApiProcess, str],
) -> None:
    api, _ = served
    api.process.send_signal(signal.SIGTERM)
    await api.wait_for("test_runtime_exit_started", timeout_s=5)
    api.process.send_signal(signal.SIGINT)
    assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    names = api.names()
    assert "shutdown_signal_ignored" in names
    assert "test_runtime_flushed" in names
    assert not any("Traceback" in str(event) for event in api.events)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "configuration error: no storage is configured: set DATABASE_URL"),
        (
            {"DATABASE_URL": "postgresql://db/memory", "RECALL_MIN_SIMILARITY": "0"},
            "configuration error: RECALL_MIN_SIMILARITY must be a number greater than 0 and at "
            "most 1, got '0'",
        ),
        ({"DATABASE_URL": "postgresql://db/memory", "PORT": "http"}, "configuration error: PORT"),
        (
            {"DATABASE_URL": "postgresql://db/memory", "HOST": "my-laptop"},
            "configuration error: HOST must be an IP address or a comma-separated list of them",
        ),
    ],
)
async def test_the_console_script_refuses_bad_configuration(
    env: dict[str, str], message: str
) -> None:
    api = await start([str(CONSOLE_SCRIPT)], clean_env(**env))
    assert await api.exit_code(timeout_s=BOOT_TIMEOUT_S) == 1
    (line,) = [event["line"] for event in api.events if event["event"] == "raw"]
    assert line.startswith(message)
    assert "Traceback" not in json.dumps(api.events)


async def test_the_console_script_refuses_an_unreachable_database() -> None:
    env = clean_env(
        DATABASE_URL="postgresql://memory@127.0.0.1:1/memory", EMBEDDING_PROVIDER="local"
    )
    api = await start([str(CONSOLE_SCRIPT), "--port", "0"], env)
    assert await api.exit_code(timeout_s=BOOT_TIMEOUT_S) == 1
    raw = [event["line"] for event in api.events if event["event"] == "raw"]
    assert len(raw) == 1 and raw[0].startswith("storage error: cannot connect to PostgreSQL")
    assert "listening" not in api.names()


async def test_the_console_script_serves_the_real_runtime_and_stops_on_sigterm(pg_url: str) -> None:
    env = clean_env(DATABASE_URL=pg_url, EMBEDDING_PROVIDER="local", MCP_API_KEY="k")
    api = await start([str(CONSOLE_SCRIPT), "--port", "0"], env)
    try:
        listening = await api.wait_for("listening")
        auth = await api.wait_for("auth")
        assert (auth["level"], auth["mode"]) == ("info", "bearer")
        url = f"http://127.0.0.1:{listening['port']}/mcp"
        async with mcp_session(url, headers={"Authorization": "Bearer k"}) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
        assert names[:2] == ["recall", "remember"]
        assert loads_postgres_driver(api.process.pid)  # what the S3 case below checks is absent
        api.process.send_signal(signal.SIGTERM)
        assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
        assert "shutdown_complete" in api.names()
    finally:
        if api.process.returncode is None:
            api.process.kill()
            await api.process.wait()


def loads_postgres_driver(pid: int) -> bool:
    """Whether the process has mapped asyncpg's compiled protocol module (imported it)."""
    return "/asyncpg/" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.skipif(platform.system() != "Linux", reason="reads /proc/<pid>/maps")
async def test_an_api_on_s3_never_loads_the_postgresql_driver(
    moto_s3_url: str, s3vectors_server: tuple[object, str]
) -> None:
    async with s3_environ(moto_s3_url, s3vectors_server[1]) as storage:
        aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
        env = clean_env(**storage, **aws, EMBEDDING_PROVIDER="local")
        api = await start([str(CONSOLE_SCRIPT), "--port", "0"], env)
        try:
            listening = await api.wait_for("listening")
            url = f"http://127.0.0.1:{listening['port']}/mcp"
            async with mcp_session(url, headers={"X-Memory-Tenant": "layers"}) as client:
                stored = await client.call_tool("remember", {"content": "the S3 API stores this"})
                assert stored.is_error is False
                recalled = await client.call_tool("recall", {"query": "what does the S3 API store"})
                assert recalled.is_error is False
            assert not loads_postgres_driver(api.process.pid)
            api.process.send_signal(signal.SIGTERM)
            assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
        finally:
            if api.process.returncode is None:
                api.process.kill()
                await api.process.wait()
