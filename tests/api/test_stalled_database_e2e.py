"""Deadlines hold whatever PostgreSQL is doing (issue 42, item 7): with the ``memories`` table
locked and the server then stopped (SIGSTOP) for longer than the tool deadline, every remember
and recall is answered at its deadline, not when the server comes back. A cancelled call must
not wait on the stalled server (asyncpg's pool release waits for the server to acknowledge the
cancellation, shielded from the caller's own cancellation): its connection is discarded.

A PostgreSQL server of this test's own (embedded, in its own data dir), so stopping it stops
nothing else; the real runtime; the official MCP client; an embedding fake (no model to load)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import mcp_types as types
import pytest

from services.api.runtime import open_runtime
from shared.config import load_config
from shared.storage.postgres.embedded import acquire_server, pgdata_path, release_server
from tests.api.conftest import McpServerFactory, mcp_session
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings

TOOL_TIMEOUT_S = 6.0
STALL_S = 15.0
# The deadline, the tool's answer and the client's round trip on 2 shared cores.
SLACK_S = 2.0


@pytest.fixture
def own_server(embedded_data_dir: Path) -> Iterator[tuple[str, Path]]:
    url = acquire_server(embedded_data_dir)
    try:
        yield url, pgdata_path(embedded_data_dir)
    finally:
        release_server(embedded_data_dir)


def server_pids(pgdata: Path) -> list[int]:
    """The postmaster and every process it started (the backends doing the work)."""
    postmaster = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
    return [postmaster, *children]


@contextlib.asynccontextmanager
async def stopped(pgdata: Path, seconds: float) -> AsyncIterator[None]:
    """Every process of the server stopped now, continued after ``seconds`` (or on exit)."""
    pids = server_pids(pgdata)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)

    async def resume() -> None:
        await asyncio.sleep(seconds)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    resuming = asyncio.create_task(resume())
    try:
        yield
    finally:
        resuming.cancel()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def timed_call(
    url: str, tool: str, arguments: dict[str, object], *, tenant: str = "acme"
) -> tuple[float, str]:
    started = time.monotonic()
    async with mcp_session(url, headers={"X-Memory-Tenant": tenant}) as client:
        result = await client.call_tool(tool, arguments)
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return time.monotonic() - started, content.text


async def test_remember_and_recall_answer_at_their_deadline_while_postgres_is_stopped(
    own_server: tuple[str, Path],  # first: the server outlives the API that uses it
    mcp_server_factory: McpServerFactory,
    openai_embeddings: FakeOpenAIEmbeddings,
) -> None:
    database_url, pgdata = own_server
    config = load_config(
        {
            "DATABASE_URL": database_url,
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_BASE_URL": openai_embeddings.base_url,
            "EMBEDDING_API_KEY": openai_embeddings.api_key,
            "TOOL_TIMEOUT_S": str(TOOL_TIMEOUT_S),
        }
    )
    url = await mcp_server_factory(runtime_factory=open_runtime, config=config)
    elapsed, text = await timed_call(url, "remember", {"content": "Builds use Node 20."})
    assert "Stored as" in text, text
    lock = await asyncpg.connect(database_url)
    try:
        await lock.execute("BEGIN; LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
        calls = [
            timed_call(url, "remember", {"content": f"Service {n} listens on port {8000 + n}."})
            for n in range(4)
        ]
        # In a tenant this process holds nothing of: acme's recall may be answered from its
        # snapshot and keyword index, read while the first remember was stored.
        question: dict[str, object] = {"query": "Which port does service 2 use?"}
        calls += [timed_call(url, "recall", question, tenant="beta")]
        tasks = [asyncio.create_task(call) for call in calls]
        await asyncio.sleep(1.0)  # each waits on the lock (or the pool) by now
        async with stopped(pgdata, STALL_S):
            answers = await asyncio.gather(*tasks)
    finally:
        lock.terminate()
    for elapsed, text in answers:
        assert text.startswith("Error: "), text
        assert elapsed < TOOL_TIMEOUT_S + SLACK_S, (elapsed, text)
    # Once the server is back, the same process serves again.
    elapsed, text = await timed_call(url, "remember", {"content": "Deploys go out on Tuesdays."})
    assert "Stored as" in text, text
