"""``tools/call`` answered without the SDK kernel: byte for byte what the kernel answers.

Two servers run side by side: one as shipped, one whose kernel carries an extra pass-through
middleware, which by design sends every call through ``serve_one``. Every request below goes to
both, and status, content type and body bytes must be equal. A spy on ``serve_one`` proves the
shipped server really took the direct path for well-formed calls and the kernel for the rest.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import mcp_types as types
import pytest
from aiohttp import web
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.runner import serve_one
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace

from services.api import mcp_transport
from services.api.app import ENDPOINT_KEY, build_app
from services.api.tools.catalogue import guarded
from services.api.tools.spec import ToolContext, ToolResult, ToolSpec
from tests.api import conftest
from tests.api._catalogue import TEST_CATALOGUE, catalogue_runtime

MODERN = MODERN_PROTOCOL_VERSIONS[0]
TENANT = {"X-Tenant-Id": "agent-studio", "X-Conversation-Id": "chat:42"}
# Non-ASCII, a line separator and a quote: what ensure_ascii=False must carry through unchanged.
AWKWARD_TEXT = 'h\u00e9 \u2028 \u2713 "quoted"'


async def _broken(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    raise RuntimeError("contract breach")


async def _verbatim(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    return ToolResult(text=str(arguments.get("text", "")))


async def _guarded_text(ctx: ToolContext, arguments: Mapping[str, Any]) -> str:
    return "guarded"


CATALOGUE = (
    *TEST_CATALOGUE,
    ToolSpec(name="broken", description="raises", input_schema={"type": "object"}, handler=_broken),
    ToolSpec(
        name="verbatim", description="text back", input_schema={"type": "object"}, handler=_verbatim
    ),
    guarded(
        name="guarded",
        description="through the catalogue's guard",
        schema={"type": "object", "properties": {}},
        handle=_guarded_text,
    ),
)


class _PassThrough(ServerMiddleware[Any]):
    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        return await call_next(ctx)


Answer = tuple[int, str, bytes]


@pytest.fixture
async def servers() -> AsyncIterator[tuple[str, str]]:
    """(shipped, kernel-only) /mcp URLs over the same catalogue."""
    runners = []
    urls = []
    for kernel_only in (False, True):
        app = build_app(conftest.test_config(), open_runtime=catalogue_runtime(CATALOGUE))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        if kernel_only:
            app[ENDPOINT_KEY].server.middleware.append(_PassThrough())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        urls.append(f"http://127.0.0.1:{runner.addresses[0][1]}/mcp")
    yield urls[0], urls[1]
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
def kernel_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The method of every request that went through ``serve_one``."""
    calls: list[str] = []

    async def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(args[2])
        return await serve_one(*args, **kwargs)

    monkeypatch.setattr(mcp_transport, "serve_one", spy)
    return calls


async def post(url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
    async with aiohttp.ClientSession() as http:
        sent = {"Content-Type": "application/json", **headers}
        async with http.post(url, data=body, headers=sent) as response:
            return response.status, response.content_type, await response.read()


def tools_call(params: Any, *, version: str | None, id_: Any = 7) -> tuple[bytes, dict[str, str]]:
    """A tools/call body and headers as the official client sends them at ``version``."""
    headers = dict(TENANT)
    if version in MODERN_PROTOCOL_VERSIONS:
        meta = {
            types.PROTOCOL_VERSION_META_KEY: version,
            types.CLIENT_INFO_META_KEY: {"name": "test", "version": "0"},
            types.CLIENT_CAPABILITIES_META_KEY: {},
        }
        params = {**params, "_meta": {**params.get("_meta", {}), **meta}}
        headers["Mcp-Method"] = "tools/call"
        if isinstance(params.get("name"), str):
            headers["Mcp-Name"] = params["name"]
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    body = {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}
    return json.dumps(body).encode(), headers


VERSIONS = [None, *HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS]

WELL_FORMED: list[dict[str, Any]] = [
    {"name": "echo", "arguments": {"text": "hello"}},
    {"name": "verbatim", "arguments": {"text": AWKWARD_TEXT}},
    {"name": "fail", "arguments": {}},
    {"name": "search_docs", "arguments": {"query": "x"}},
    {"name": "broken", "arguments": {}},
    {"name": "echo"},
    {"name": "echo", "arguments": None},
    {"name": "echo", "arguments": {"text": "x"}, "unknownField": 1},
    {"name": "echo", "arguments": {"text": "x"}, "_meta": {"progressToken": "p-1"}},
]

MALFORMED: list[Any] = [
    {},
    {"arguments": {"text": "x"}},
    {"name": 42, "arguments": {}},
    {"name": "echo", "arguments": ["text"]},
    {"name": "echo", "arguments": "text"},
    {"name": "echo", "_meta": {"progressToken": [1]}},
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("params", WELL_FORMED)
async def test_a_well_formed_call_is_answered_directly_as_the_kernel_answers(
    servers: tuple[str, str], kernel_calls: list[str], version: str | None, params: dict[str, Any]
) -> None:
    shipped, kernel_only = servers
    body, headers = tools_call(params, version=version)
    direct = await post(shipped, body, headers)
    assert kernel_calls == []
    assert direct == await post(kernel_only, body, headers)
    assert kernel_calls == ["tools/call"]


@pytest.mark.parametrize("version", [None, HANDSHAKE_PROTOCOL_VERSIONS[-1], MODERN])
@pytest.mark.parametrize("params", MALFORMED)
async def test_malformed_params_are_left_to_the_kernel(
    servers: tuple[str, str], kernel_calls: list[str], version: str | None, params: Any
) -> None:
    shipped, kernel_only = servers
    body, headers = tools_call(params, version=version)
    first = await post(shipped, body, headers)
    by_shipped = len(kernel_calls)
    assert first == await post(kernel_only, body, headers)
    # Each reached the kernel or neither did (a name that is not a string already fails the
    # modern ladder's Mcp-Name rung, before either path).
    assert by_shipped == len(kernel_calls) - by_shipped
    assert b'"error"' in first[2]


@pytest.mark.parametrize("version", [None, MODERN])
async def test_a_refused_tenant_header_and_a_string_id_match_the_kernel(
    servers: tuple[str, str], version: str | None
) -> None:
    shipped, kernel_only = servers
    body, headers = tools_call({"name": "echo", "arguments": {}}, version=version, id_="req-1")
    headers["X-Tenant-Id"] = "../escape"
    direct = await post(shipped, body, headers)
    assert direct == await post(kernel_only, body, headers)
    assert b"X-Tenant-Id must start with" in direct[2]


async def test_a_configured_tracer_provider_sends_every_call_through_the_kernel(
    servers: tuple[str, str], kernel_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real provider would make the kernel's span record something: it must not be skipped.
    monkeypatch.setattr(trace, "get_tracer_provider", trace.NoOpTracerProvider)
    body, headers = tools_call({"name": "echo", "arguments": {}}, version=MODERN)
    status, _, _ = await post(servers[0], body, headers)
    assert status == 200
    assert kernel_calls == ["tools/call"]


@pytest.mark.parametrize("version", [None, MODERN])
async def test_the_guard_logs_the_same_lines_on_both_paths(
    servers: tuple[str, str], caplog: pytest.LogCaptureFixture, version: str | None
) -> None:
    def lines() -> list[tuple[str, Any, Any, Any, Any]]:
        return [
            (
                r.getMessage(),
                r.__dict__.get("tool"),
                r.__dict__.get("tenant"),
                r.__dict__.get("ok"),
                r.__dict__.get("inConversation"),
            )
            for r in caplog.records
            if r.name.startswith("services.")
        ]

    answers = []
    logged = []
    for url in servers:
        caplog.clear()
        for params in (
            {"name": "guarded", "arguments": {}},
            {"name": "guarded", "arguments": {"x": 1}},
        ):
            body, headers = tools_call(params, version=version)
            with caplog.at_level(logging.INFO):
                answers.append(await post(url, body, headers))
        logged.append(lines())
    assert answers[:2] == answers[2:]
    assert logged[0] == logged[1]
    assert [line[0] for line in logged[0]] == ["tool_call", "tool_call"]
