"""The HTTP gates over real HTTP: /health, 404, browser origins, the bearer key, /metrics."""

from __future__ import annotations

import json

import aiohttp
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from services.api.http.gates import bearer_matches
from tests.api.conftest import McpServerFactory, Mode, mcp_session

KEY = "s3cret"
LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


async def request(
    method: str, url: str, *, headers: dict[str, str] | None = None, body: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, url, headers=headers or {}, data=body) as response,
    ):
        return response.status, dict(response.headers), await response.read()


def root(mcp_url: str) -> str:
    return mcp_url.removesuffix("/mcp")


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "HEAD"])
async def test_health_answers_any_method_without_auth(
    mcp_server_factory: McpServerFactory, method: str
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    status, _, body = await request(method, f"{root(url)}/health")
    assert status == 200
    if method != "HEAD":
        assert json.loads(body) == {"status": "ok"}


@pytest.mark.parametrize("path", ["/mcp-extra", "/mcp/", "/healthz", "/mcp/tools", "/ui"])
async def test_other_paths_are_404(mcp_url: str, path: str) -> None:
    status, headers, body = await request("POST", f"{root(mcp_url)}{path}", body=LIST_TOOLS)
    assert status == 404
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(body) == {"error": "not found"}


async def test_a_post_to_the_servers_address_without_mcp_names_the_endpoint(
    mcp_server_factory: McpServerFactory,
) -> None:
    # GET / is the pointer (test_banner.py); a client given the address alone POSTs here.
    url = await mcp_server_factory(api_key=KEY)
    status, _, body = await request("POST", f"{root(url)}/", body=LIST_TOOLS)
    assert status == 404
    assert json.loads(body) == {"error": "not found: MCP is served at POST /mcp"}
    status, _, body = await request("GET", f"{root(url)}/", headers={"Accept": "*/*"})
    assert status == 200
    assert json.loads(body)["tenant_header"] == "X-Memory-Tenant"


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1"])
async def test_a_browser_origin_is_refused_before_auth(
    mcp_server_factory: McpServerFactory, origin: str
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    status, _, body = await request("POST", url, headers={"Origin": origin}, body=LIST_TOOLS)
    assert status == 403
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32002, "message": "browser origins are not allowed"},
    }


async def test_a_browser_origin_is_refused_even_with_the_key(
    mcp_server_factory: McpServerFactory,
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    headers = {"Origin": "null", "Authorization": f"Bearer {KEY}"}
    status, _, _ = await request("POST", url, headers=headers, body=LIST_TOOLS)
    assert status == 403


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer wrong", "Bearer", "Bearer ", "Basic s3cret", "s3cret", "Bearer s3cre"],
)
async def test_without_the_key_mcp_is_401(
    mcp_server_factory: McpServerFactory, authorization: str | None
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    headers = {} if authorization is None else {"Authorization": authorization}
    status, response_headers, body = await request("POST", url, headers=headers, body=LIST_TOOLS)
    assert status == 401
    assert response_headers["WWW-Authenticate"] == 'Bearer realm="mcp"'
    error = json.loads(body)["error"]
    assert error["code"] == -32001
    assert "bearer token" in error["message"]


@pytest.mark.parametrize("authorization", ["Bearer s3cret", "BEARER  s3cret", "bearer s3cret"])
async def test_with_the_key_mcp_answers(
    mcp_server_factory: McpServerFactory, authorization: str
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    headers = {"Authorization": authorization, "Content-Type": "application/json"}
    status, _, body = await request("POST", url, headers=headers, body=LIST_TOOLS)
    assert status == 200
    assert [tool["name"] for tool in json.loads(body)["result"]["tools"]] == [
        "echo",
        "fail",
        "slow",
    ]


@pytest.mark.parametrize(
    ("authorization", "expected"),
    [
        ("Bearer s3cret", True),
        ("BEARER  s3cret", True),
        ("bEaReR \t s3cret", True),
        # Leading whitespace of the token is dropped, trailing is not. Over HTTP this case cannot
        # arise: parsers drop a field value's trailing whitespace (RFC 9110 §5.5) before any
        # application sees it, aiohttp's included, so it is pinned here on the function.
        ("Bearer s3cret ", False),
        ("Bearer s3cret\t", False),
        ("Bearer  s3cret2", False),
        ("Bearer é", False),
        (" Bearer s3cret", False),
        ("Bearer", False),
        (None, False),
    ],
)
def test_bearer_matching(authorization: str | None, expected: bool) -> None:
    assert bearer_matches(authorization, key=KEY) is expected


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_connects_with_the_key(
    mcp_server_factory: McpServerFactory, mode: Mode
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    headers = {"Authorization": f"Bearer {KEY}", "X-Tenant-Id": "t"}
    async with mcp_session(url, headers=headers, mode=mode) as client:
        result = await client.call_tool("echo", {})
    assert isinstance(result, CallToolResult) and result.is_error is False
    assert isinstance(result.content[0], TextContent)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_is_refused_without_the_key(
    mcp_server_factory: McpServerFactory, mode: Mode
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    with pytest.raises(ExceptionGroup) as refused:
        async with mcp_session(url, headers={"X-Tenant-Id": "t"}, mode=mode) as client:
            await client.list_tools()
    # The SDK surfaces the 401's JSON-RPC body as the error, inside its task groups.
    matched, _ = refused.value.split(lambda error: isinstance(error, MCPError))
    assert matched is not None
    codes = {error.code for error in _leaves(matched) if isinstance(error, MCPError)}
    assert codes == {-32001}


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    leaves: list[BaseException] = []
    for error in group.exceptions:
        leaves.extend(_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    return leaves


async def test_metrics_are_served_open_even_with_a_key(
    mcp_server_factory: McpServerFactory,
) -> None:
    url = await mcp_server_factory(api_key=KEY)
    status, headers, body = await request("GET", f"{root(url)}/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    assert b"mcp_memory_tool_calls_total" in body or b"mcp_memory_tool_duration_seconds" in body


async def test_mcp_is_open_without_a_key(mcp_url: str) -> None:
    status, _, _ = await request(
        "POST", mcp_url, headers={"Content-Type": "application/json"}, body=LIST_TOOLS
    )
    assert status == 200
