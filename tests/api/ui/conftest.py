"""One real ``mcp-memory-api --local`` process for the memory page's tests, seeded through MCP
with the official client, and one headless chromium to look at it.

The process runs on a fresh embedded database with the local model, the API and the page each
on a free port (``--port 0 --ui-port 0``). Screenshots land in ``test-artifacts/ui/`` (ignored by
git; CI may keep them).
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from services.api.main import SHUTDOWN_GRACE_S
from tests.api._process import CONSOLE_SCRIPT, REPO, ApiProcess, clean_env, start, stop
from tests.api.conftest import mcp_session
from tests.api.ui._browser import CHROMIUM, Browser, launch
from tests.conftest import _embedded_data_dir

ARTIFACTS = REPO / "test-artifacts" / "ui"
TENANT = "acme"
OTHER_TENANT = "globex"
CONVERSATION = "chat:ui-1"
# A name only this browser resolves, to 127.0.0.1: a DNS-rebinding page's view of the server.
REBOUND_HOST = "evil.example"

LONG_RUNBOOK = (
    "Runbook for E1042 (vector dimension mismatch). "
    + " ".join(
        f"Step {n}: check that EMBEDDING_DIM matches the index on shard {n} and note the result."
        for n in range(1, 31)
    )
    + " Last step: restart the API with the corrected EMBEDDING_DIM and run the smoke test."
)
# Oldest first: (content, type, category, tags).
SEEDS: tuple[tuple[str, str, str | None, list[str]], ...] = (
    (
        "We deploy with make deploy ENV=prod; staging is make deploy ENV=staging.",
        "pattern",
        "command",
        ["deploy"],
    ),
    (
        "The API listens on port 3000 and the memory page on port 3001 under --local.",
        "project",
        "decision",
        ["ops"],
    ),
    (LONG_RUNBOOK, "reference", "runbook", ["runbook", "ops"]),
    (
        "Retry a failed embedding call 3 times before giving up on the request.",
        "project",
        "convention",
        ["ops"],
    ),
    (
        "The old staging database lives on db-staging-7 and is due to be retired in March.",
        "project",
        None,
        ["ops", "legacy"],
    ),
)
NOTE = "In this chat we agreed to call the next release Tangerine."
SECRET = "Globex secret: the vault code is PERSIMMON-42."


class Seeded(msgspec.Struct, frozen=True, kw_only=True):
    """The server, its two URLs and what was stored: ids oldest first, by content."""

    api: ApiProcess
    mcp_url: str
    ui_url: str
    ids: dict[str, str]
    note_id: str
    secret_id: str

    def id_of(self, start: str) -> str:
        return next(i for content, i in self.ids.items() if content.startswith(start))


async def remember(
    url: str, headers: Mapping[str, str], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    async with mcp_session(url, headers=headers) as client:
        result = await client.call_tool("remember", dict(arguments))
    assert not result.is_error, result
    assert result.structured_content is not None
    return dict(result.structured_content)


async def call(
    url: str, tool: str, arguments: Mapping[str, Any], *, conversation: str | None = None
) -> Any:
    headers = {"X-Memory-Tenant": TENANT}
    if conversation is not None:
        headers["X-Conversation-Id"] = conversation
    async with mcp_session(url, headers=headers) as client:
        return await client.call_tool(tool, dict(arguments))


async def _seed(mcp_url: str) -> tuple[dict[str, str], str, str]:
    ids: dict[str, str] = {}
    acme = {"X-Memory-Tenant": TENANT}
    for content, memory_type, category, tags in SEEDS:
        arguments: dict[str, Any] = {"content": content, "type": memory_type, "tags": tags}
        if category is not None:
            arguments["category"] = category
        stored = await remember(mcp_url, acme, arguments)
        assert stored["stored"], content
        ids[content] = stored["id"]
    note = await remember(
        mcp_url,
        {**acme, "X-Conversation-Id": CONVERSATION},
        {"content": NOTE, "scope": "conversation", "type": "conversation"},
    )
    secret = await remember(mcp_url, {"X-Memory-Tenant": OTHER_TENANT}, {"content": SECRET})
    return ids, note["id"], secret["id"]


@pytest.fixture(scope="package")
async def seeded() -> AsyncIterator[Seeded]:
    with _embedded_data_dir() as data_dir:
        args = [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(data_dir)]
        api = await start([*args, "--port", "0", "--ui-port", "0"], clean_env())
        try:
            listening = await api.wait_for("listening")
            ui = await api.wait_for("ui_listening")
            mcp_url = f"http://127.0.0.1:{listening['port']}/mcp"
            ids, note_id, secret_id = await _seed(mcp_url)
            yield Seeded(
                api=api,
                mcp_url=mcp_url,
                ui_url=ui["url"],
                ids=ids,
                note_id=note_id,
                secret_id=secret_id,
            )
            api.process.send_signal(signal.SIGTERM)
            assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
        finally:
            await stop(api)


@pytest.fixture(scope="package")
async def browser() -> AsyncIterator[Browser]:
    if CHROMIUM is None:
        pytest.skip(
            "chromium is not installed: `apt-get install chromium` (Debian's package; .ci/run "
            "installs it) to run the memory page's browser tests"
        )
    async with launch(host_rules=f"MAP {REBOUND_HOST} 127.0.0.1") as started:
        yield started


@pytest.fixture(scope="package")
def artifacts() -> Iterator[Path]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield ARTIFACTS
