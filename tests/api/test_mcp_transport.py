"""POST /mcp end to end: the official MCP client in both eras, and raw HTTP for the edges."""

from __future__ import annotations

import gzip
import json
import tomllib
from importlib.metadata import version as distribution_version
from pathlib import Path
from typing import Any

import aiohttp
import mcp_types as types
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from services.api.http.mcp_transport import MAX_BODY_BYTES
from services.api.tools.catalogue_server import SERVER_NAME
from services.api.tools.definition import ToolContext, ToolResult, ToolSpec
from tests.api._catalogue import ECHO, TEST_CATALOGUE
from tests.api.conftest import McpServerFactory, Mode, mcp_session

MODES: list[Mode] = ["auto", "legacy"]
TENANT = {"X-Tenant-Id": "agent-studio"}
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def post(url: str, body: bytes | str, **headers: str) -> aiohttp.ClientResponse:
    async with aiohttp.ClientSession() as http:
        response = await http.post(
            url, data=body, headers={"Content-Type": "application/json", **headers}
        )
        await response.read()
        return response


async def post_json(url: str, body: bytes | str, **headers: str) -> tuple[int, Any]:
    response = await post(url, body, **headers)
    assert response.content_type == "application/json"
    return response.status, json.loads(await response.read())


def legacy_request(method: str, params: dict[str, Any] | None = None, id_: int = 1) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def modern_request(method: str, params: dict[str, Any] | None = None) -> tuple[str, dict[str, str]]:
    meta = {
        types.PROTOCOL_VERSION_META_KEY: "2026-07-28",
        types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    body = legacy_request(method, {**(params or {}), "_meta": meta})
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if method == "tools/call" and params is not None:
        headers["Mcp-Name"] = params["name"]
    return body, headers


@pytest.mark.parametrize("mode", MODES)
async def test_discovery_needs_no_tenant_and_lists_the_catalogue_in_order(
    mcp_url: str, mode: Mode
) -> None:
    async with mcp_session(mcp_url, mode=mode) as client:
        if mode == "auto":
            assert client.protocol_version == "2026-07-28"
        else:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        listed = await client.list_tools()
        capabilities = client.server_capabilities
    assert [tool.name for tool in listed.tools] == [spec.name for spec in TEST_CATALOGUE]
    assert listed.tools[0].input_schema == ECHO.input_schema
    assert listed.tools[0].description == ECHO.description
    assert capabilities.tools is not None and capabilities.tools.list_changed is False
    assert capabilities.resources is None and capabilities.prompts is None


@pytest.mark.parametrize("mode", MODES)
async def test_server_reports_the_version_written_in_pyproject(mcp_url: str, mode: Mode) -> None:
    written = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    async with mcp_session(mcp_url, mode=mode) as client:
        info = client.server_info
    assert info is not None
    assert (info.name, info.version) == (SERVER_NAME, written)
    # The installed metadata is what the process reads: a stale install fails here too.
    assert distribution_version("mcp-memory") == written


@pytest.mark.parametrize("mode", MODES)
async def test_tool_call_runs_the_handler_with_the_resolved_context(
    mcp_url: str, mode: Mode
) -> None:
    headers = {**TENANT, "X-Conversation-Id": "chat:42"}
    async with mcp_session(mcp_url, headers=headers, mode=mode) as client:
        result = await client.call_tool("echo", {"text": "hello"})
    assert result.is_error is False
    assert json.loads(text_of(result)) == {
        "tenant": "agent-studio",
        "conversation": "chat:42",
        "arguments": {"text": "hello"},
    }


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_error_comes_back_as_is_error(mcp_url: str, mode: Mode) -> None:
    async with mcp_session(mcp_url, headers=TENANT, mode=mode) as client:
        result = await client.call_tool("fail", {})
    assert result.is_error is True
    assert text_of(result) == "Error: this tool always refuses"


@pytest.mark.parametrize("mode", MODES)
async def test_an_unknown_tool_is_a_tool_error(mcp_url: str, mode: Mode) -> None:
    async with mcp_session(mcp_url, headers=TENANT, mode=mode) as client:
        result = await client.call_tool("search_docs", {"query": "x"})
    assert result.is_error is True
    assert text_of(result) == 'Error: unknown tool "search_docs".'


@pytest.mark.parametrize("mode", MODES)
async def test_a_handler_that_raises_is_a_jsonrpc_error_not_a_500(
    mcp_server_factory: McpServerFactory, mode: Mode
) -> None:
    async def broken(ctx: ToolContext, arguments: object) -> ToolResult:
        raise RuntimeError("contract breach")

    spec = ToolSpec(
        name="broken", description="raises", input_schema={"type": "object"}, handler=broken
    )
    url = await mcp_server_factory(catalogue=(spec,))
    if mode == "legacy":
        status, body = await post_json(
            url, legacy_request("tools/call", {"name": "broken", "arguments": {}}), **TENANT
        )
    else:
        payload, headers = modern_request("tools/call", {"name": "broken", "arguments": {}})
        status, body = await post_json(url, payload, **headers, **TENANT)
    assert status == 200
    assert body["error"]["code"] == types.INTERNAL_ERROR
    assert "contract breach" not in json.dumps(body)


async def test_initialize_answers_one_json_body_without_a_session(mcp_url: str) -> None:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    response = await post(mcp_url, legacy_request("initialize", params))
    body = json.loads(await response.read())
    assert response.status == 200
    assert response.content_type == "application/json"
    assert "Mcp-Session-Id" not in response.headers
    assert body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["serverInfo"]["name"] == "mcp-memory"


async def test_server_discover_answers_the_modern_revision(mcp_url: str) -> None:
    payload, headers = modern_request("server/discover")
    status, body = await post_json(mcp_url, payload, **headers)
    assert status == 200
    assert body["result"]["supportedVersions"] == ["2026-07-28"]
    stamp = body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert stamp == {"name": "mcp-memory", "version": distribution_version("mcp-memory")}


async def test_modern_request_whose_headers_disagree_with_its_body_is_refused(mcp_url: str) -> None:
    payload, headers = modern_request("tools/list")
    status, body = await post_json(mcp_url, payload, **{**headers, "Mcp-Method": "tools/call"})
    assert status == 400
    assert body["error"]["code"] == types.HEADER_MISMATCH
    assert "mcp-method" in body["error"]["message"]


@pytest.mark.parametrize(("mode", "status"), [("legacy", 200), ("auto", 404)])
async def test_an_unknown_method_is_method_not_found(mcp_url: str, mode: Mode, status: int) -> None:
    if mode == "legacy":
        got, body = await post_json(mcp_url, legacy_request("resources/list"))
    else:
        payload, headers = modern_request("resources/list")
        got, body = await post_json(mcp_url, payload, **headers)
    assert got == status
    assert body["error"]["code"] == types.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["notifications/initialized", "notifications/cancelled"])
async def test_a_notification_is_accepted_with_202_and_no_body(mcp_url: str, method: str) -> None:
    response = await post(mcp_url, json.dumps({"jsonrpc": "2.0", "method": method}))
    assert response.status == 202
    assert await response.read() == b""


@pytest.mark.parametrize("body", [b"{not json", b'{"jsonrpc": "2.0", "id": 1,', b"\xff\xfe", b""])
async def test_malformed_json_is_a_parse_error(mcp_url: str, body: bytes) -> None:
    status, answer = await post_json(mcp_url, body)
    assert status == 400
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": types.PARSE_ERROR, "message": "Parse error: body is not valid JSON"},
    }


@pytest.mark.parametrize(
    "body", ["[]", '[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]', "42", '{"id": 1}']
)
async def test_json_that_is_not_one_request_is_an_invalid_request(mcp_url: str, body: str) -> None:
    status, answer = await post_json(mcp_url, body)
    assert status == 400
    assert answer["error"]["code"] == types.INVALID_REQUEST
    assert answer["id"] is None


async def test_a_body_over_4_mib_is_refused_with_413(mcp_url: str) -> None:
    padding = "x" * MAX_BODY_BYTES
    body = legacy_request("tools/call", {"name": "echo", "arguments": {"text": padding}})
    status, answer = await post_json(mcp_url, body, **TENANT)
    assert status == 413
    assert "4 MiB" in answer["error"]["message"]


async def test_a_body_just_under_the_limit_is_served(mcp_url: str) -> None:
    envelope = legacy_request("tools/call", {"name": "echo", "arguments": {"text": ""}})
    padding = "x" * (MAX_BODY_BYTES - len(envelope))
    body = legacy_request("tools/call", {"name": "echo", "arguments": {"text": padding}})
    assert len(body) == MAX_BODY_BYTES
    status, answer = await post_json(mcp_url, body, **TENANT)
    assert status == 200
    assert answer["result"]["isError"] is False


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_other_methods_on_mcp_are_405(mcp_url: str, method: str) -> None:
    async with aiohttp.ClientSession() as http, http.request(method, mcp_url) as response:
        assert response.status == 405
        assert response.headers["Allow"] == "POST"
        assert "POST" in (await response.json())["error"]


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_body_that_is_not_encoded_as_it_says_is_a_400_parse_error(
    mcp_url: str, encoding: str
) -> None:
    """Content-Encoding names a compression the body does not have: aiohttp's decoder fails
    while the body is read, which used to escape as a 500 "Server got itself in trouble"."""
    body = legacy_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    response = await post(mcp_url, body, **{"Content-Encoding": encoding}, **TENANT)
    assert response.status == 400
    assert response.content_type == "application/json"
    payload = json.loads(await response.read())
    assert payload["error"]["code"] == types.PARSE_ERROR
    assert (
        encoding in payload["error"]["message"]
        and "Content-Encoding" in payload["error"]["message"]
    )


async def test_a_body_that_is_compressed_as_it_says_is_served(mcp_url: str) -> None:
    body = legacy_request("tools/call", {"name": "echo", "arguments": {"text": "zipped"}})
    response = await post(
        mcp_url, gzip.compress(body.encode()), **{"Content-Encoding": "gzip"}, **TENANT
    )
    assert response.status == 200
    assert "zipped" in (await response.read()).decode()


async def test_an_encoding_the_server_cannot_decode_is_a_400_not_a_500(mcp_url: str) -> None:
    """aiohttp refuses an undecodable Content-Encoding (brotli without its package) at the headers,
    before any handler runs."""
    body = legacy_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    response = await post(mcp_url, body, **{"Content-Encoding": "br"}, **TENANT)
    assert response.status == 400
