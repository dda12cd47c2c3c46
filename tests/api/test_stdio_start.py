"""``mcp-memory-api --stdio`` answers the handshake and ``tools/list`` at once and opens its
runtime behind them: a tool call waits for it, and a runtime that cannot open is answered, not
hung. Raw JSON-RPC on a real process, each line timed as it arrives."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest

from services.api.stdio.deferred import tool_definitions, waiting_catalogue
from services.api.tools import build_catalogue
from shared.config import load_config
from shared.operations import OperationsContext
from shared.storage.postgres.embedded import (
    KEEPER_MODULE,
    acquire_server,
    pgdata_path,
    release_server,
)
from tests.api._stdio_process import BOOT_TIMEOUT_S, INITIALIZE, StdioProcess, stdio_server


@pytest.fixture
async def laptop(embedded_data_dir: Path) -> AsyncIterator[StdioProcess]:
    """A stdio server on a fresh embedded data dir, in no conversation."""
    async with stdio_server(
        ["--local", "--data-dir", str(embedded_data_dir)], MCP_MEMORY_TENANT="laptop"
    ) as server:
        yield server


async def test_the_handshake_is_answered_before_the_runtime_opens_and_calls_wait_for_it(
    laptop: StdioProcess,
) -> None:
    # Everything is sent at once, as a client does; the answers are timed as they arrive.
    initialize = await laptop.send("initialize", INITIALIZE)
    await laptop.notify("notifications/initialized")
    listing = await laptop.send("tools/list")
    stats = await laptop.send("tools/call", {"name": "memory_stats", "arguments": {}})
    initialized_at, _ = await laptop.answer(initialize)
    listed_at, listed = await laptop.answer(listing)
    called_at, called = await laptop.answer(stats)
    opened_at = laptop.logged_at("serving_stdio")
    figures = (
        f"initialize {initialized_at:.2f} s, tools/list {listed_at:.2f} s, runtime open "
        f"{opened_at:.2f} s, first tool call {called_at:.2f} s"
    )
    print(figures)  # the measurement, with -s
    # Answered before the database and the model were open: the handshake never waits on them.
    assert initialized_at < opened_at and listed_at < opened_at, figures
    assert [tool["name"] for tool in listed["result"]["tools"]][:2] == ["recall", "remember"]
    # The call waited for the runtime instead of failing.
    assert opened_at <= called_at, figures
    assert called["result"]["isError"] is False, called
    assert "no memories yet" in called["result"]["content"][0]["text"]
    # stdio has no headers: a refusal that needs a conversation names the server's environment.
    _, text, is_error = await laptop.call(
        "remember", {"content": "We pair on Fridays.", "scope": "conversation"}
    )
    assert is_error and "MCP_MEMORY_CONVERSATION set in this server's environment" in text, text
    assert "X-Conversation-Id" not in text
    _, text, is_error = await laptop.call("forget", {"filter": {"conversation_only": True}})
    assert is_error and "MCP_MEMORY_CONVERSATION set" in text and "X-Conversation-Id" not in text
    assert await laptop.leave() == 0


async def test_a_runtime_that_cannot_open_answers_every_call_and_exits_1() -> None:
    # Nothing listens on port 1: the store refuses at once, after the handshake was answered.
    url = "postgresql://memory:s3cret@127.0.0.1:1/memories"
    async with stdio_server(
        [], MCP_MEMORY_TENANT="laptop", DATABASE_URL=url, EMBEDDING_PROVIDER="local"
    ) as server:
        _, initialized = await server.answer(await server.send("initialize", INITIALIZE))
        assert initialized["result"]["serverInfo"]["name"] == "mcp-memory"
        await server.notify("notifications/initialized")
        for tool, arguments in (("memory_stats", {}), ("recall", {"query": "anything"})):
            _, text, is_error = await server.call(tool, arguments)
            assert is_error and text.startswith(
                "Error: the memory server could not open its storage or model; the reason is on "
                "its stderr"
            ), text
            # The URL is the operator's to read, not the model's.
            assert "s3cret" not in text and "127.0.0.1" not in text
        assert await server.leave() == 1
        # The reason, one plain line on stderr beside the JSON logs (the client's log).
        (line,) = server.plain
        assert line.startswith("startup error: cannot connect to PostgreSQL"), line
        assert server.logged_at("startup_failed") > 0


@pytest.mark.parametrize("knowledge_base", [None, "KB12345678"])
def test_the_tools_listed_before_the_runtime_are_the_runtimes_own(
    knowledge_base: str | None,
) -> None:
    environ = {"DATABASE_URL": "postgresql://unused/none"}
    if knowledge_base is not None:
        environ["KNOWLEDGE_BASE_ID"] = knowledge_base
    config = load_config(environ)

    async def never() -> str:
        raise AssertionError("listing must not wait for the runtime")

    listed = waiting_catalogue(tool_definitions(config), never)
    # The handlers are never called: only what tools/list shows is compared.
    ops = cast(OperationsContext, None)
    docs = cast(Any, object()) if knowledge_base is not None else None
    built = build_catalogue(ops, docs=docs)

    def shown(specs: Any) -> list[tuple[Any, ...]]:
        return [(s.name, s.description, s.input_schema, s.output_schema) for s in specs]

    assert shown(listed) == shown(built)
    assert (listed[-1].name == "search_docs") is (knowledge_base is not None)


async def test_a_client_that_leaves_during_the_opening_leaves_no_database_running(
    laptop: StdioProcess, embedded_data_dir: Path
) -> None:
    """A health check (`claude mcp list`, an Inspector call) leaves right after the handshake,
    and the MCP SDKs SIGKILL a server still running two seconds after stdin closes: the opening
    is cancelled, and a PostgreSQL it started is stopped, not orphaned."""
    await laptop.answer(await laptop.send("initialize", INITIALIZE))
    left = time.monotonic()
    assert await laptop.leave() == 0
    took = time.monotonic() - left
    assert not (pgdata_path(embedded_data_dir) / "postmaster.pid").exists()
    assert "serving_stdio" not in [line.get("event") for _, line in laptop.logs], took
    print(f"exited {took:.2f} s after its client left")


def keepers(data_dir: Path) -> list[int]:
    """The pids of the processes keeping the embedded server in ``data_dir``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            argv = cmdline.read_bytes().split(b"\0")
            if KEEPER_MODULE.encode() in argv and str(data_dir).encode() in argv:
                found.append(int(cmdline.parent.name))
    return found


async def test_a_server_killed_while_its_database_starts_leaves_none_running(
    embedded_data_dir: Path,
) -> None:
    """Claude Code ends a server with SIGKILL 0.5 s after asking it to stop, and `claude mcp
    list` asks right after the handshake: while the embedded PostgreSQL is still starting. A
    server killed then must leave no PostgreSQL (and no keeper) running."""
    # Initialised beforehand, so the server's start is `pg_ctl start` alone: the postmaster's pid
    # file appearing then means the start is in flight, and the kill lands inside it.
    await asyncio.to_thread(acquire_server, embedded_data_dir)
    await asyncio.to_thread(release_server, embedded_data_dir)
    pid_file = pgdata_path(embedded_data_dir) / "postmaster.pid"
    assert not pid_file.exists()
    async with stdio_server(
        ["--local", "--data-dir", str(embedded_data_dir)], MCP_MEMORY_TENANT="laptop"
    ) as server:
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while not pid_file.exists():
            assert time.monotonic() < deadline, "the embedded server never started"
            await asyncio.sleep(0.005)
        server.process.kill()
        await server.process.wait()
    deadline = time.monotonic() + 30
    while pid_file.exists() or keepers(embedded_data_dir):
        assert time.monotonic() < deadline, f"{pid_file} or its keeper still there after 30 s"
        await asyncio.sleep(0.1)
