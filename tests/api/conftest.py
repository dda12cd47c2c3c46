"""Real servers on real ports, and the official MCP client, for the API's end-to-end tests.

``mcp_server_factory`` starts ``build_app`` on 127.0.0.1 on a free port and returns the ``/mcp``
URL; it serves the small test catalogue unless given another catalogue or a runtime factory (the
real ``services.api.runtime.open_runtime`` works here too). Servers stop when the test ends.

``mcp_session(url, headers=..., mode=...)`` opens ``mcp.Client`` over Streamable HTTP with those
headers on every request: ``mode="auto"`` probes ``server/discover`` (the 2026-07-28 era),
``mode="legacy"`` forces the ``initialize`` handshake.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Literal, Protocol

import httpx2
import pytest
from aiohttp import web
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from services.api.http.app import build_app
from services.api.tools.definition import ToolSpec
from shared.config import Config, EmbeddingSettings, RecallSettings, ServerSettings
from tests.api._catalogue import TEST_CATALOGUE, RuntimeFactory, catalogue_runtime

Mode = Literal["auto", "legacy"]
Headers = Mapping[str, str] | Sequence[tuple[str, str | bytes]]


def test_config(*, api_key: str | None = None) -> Config:
    """A valid Config for a server whose runtime opens no storage."""
    return Config(
        backend="embedded",
        embedding=EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", dim=384),
        recall=RecallSettings(min_similarity=0.25, high_similarity=0.55),
        server=ServerSettings(mcp_api_key=api_key),
    )


class McpServerFactory(Protocol):
    async def __call__(
        self,
        *,
        catalogue: tuple[ToolSpec, ...] | None = None,
        runtime_factory: RuntimeFactory | None = None,
        api_key: str | None = None,
        config: Config | None = None,
    ) -> str: ...


@pytest.fixture
async def mcp_server_factory() -> AsyncIterator[McpServerFactory]:
    runners: list[web.AppRunner] = []

    async def start(
        *,
        catalogue: tuple[ToolSpec, ...] | None = None,
        runtime_factory: RuntimeFactory | None = None,
        api_key: str | None = None,
        config: Config | None = None,
    ) -> str:
        opener = runtime_factory or catalogue_runtime(catalogue or TEST_CATALOGUE)
        app = build_app(config or test_config(api_key=api_key), open_runtime=opener)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=5)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for runner in reversed(runners):
        await runner.cleanup()


@pytest.fixture
async def mcp_url(mcp_server_factory: McpServerFactory) -> str:
    """One open-mode server with the test catalogue."""
    return await mcp_server_factory()


@contextlib.asynccontextmanager
async def mcp_session(
    url: str, *, headers: Headers | None = None, mode: Mode = "auto"
) -> AsyncIterator[Client]:
    """The official client, connected, sending ``headers`` on every request.

    ``headers`` may be a list of pairs, to send one header twice or a value as raw bytes.
    """
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
    # A bytes value beside str ones is sent as it is; the client's types allow one kind only.
    async with httpx2.AsyncClient(headers=pairs, timeout=30) as http:  # type: ignore[arg-type]
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client
