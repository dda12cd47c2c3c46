"""The Host gate of a loopback listener: which values pass, and the refusals over real HTTP.

The real process is covered in ``test_listen_address``; here the application runs in-process on
127.0.0.1, configured as a loopback listener, so raw requests can send what no client library
would (no Host at all).
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import msgspec
import pytest

from services.api.http.host_header import host_name, loopback_names
from shared.config import ServerSettings
from tests.api.conftest import McpServerFactory, mcp_session
from tests.api.conftest import test_config as base_config

LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("localhost", "localhost"),
        ("LocalHost:3000", "localhost"),
        ("localhost:", "localhost"),
        ("127.0.0.1:65535", "127.0.0.1"),
        ("[::1]:3000", "[::1]"),
        ("[::1]", "[::1]"),
        ("evil.example", "evil.example"),
        ("localhost.evil.example:3000", "localhost.evil.example"),
        ("localhost:3000:1", None),
        ("localhost:http", None),
        ("[::1]x", None),
        ("::1", None),
    ],
)
def test_host_name_is_the_name_without_the_port(value: str, expected: str | None) -> None:
    assert host_name(value) == expected


def test_only_a_loopback_listener_checks_the_host() -> None:
    assert loopback_names(("0.0.0.0", "::")) is None
    assert loopback_names(("127.0.0.1", "10.0.0.5")) is None
    assert loopback_names(("127.0.0.1",)) == frozenset({"localhost", "127.0.0.1", "[::1]"})
    assert loopback_names(("127.0.0.2", "::1")) == frozenset(
        {"localhost", "127.0.0.1", "[::1]", "127.0.0.2"}
    )


async def raw_exchange(url: str, head: str) -> tuple[int, dict[str, object]]:
    """Send ``head`` (request line and headers) and a tools/list body; status and JSON body."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    body = LIST_TOOLS.encode()
    writer.write(
        f"{head}Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
    response = await reader.read()
    writer.close()
    status_line, _, rest = response.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


@pytest.fixture
async def loopback_url(mcp_server_factory: McpServerFactory) -> str:
    return await mcp_server_factory(
        config=msgspec.structs.replace(base_config(), server=ServerSettings(hosts=("127.0.0.1",)))
    )


@pytest.mark.parametrize(
    ("head", "message"),
    [
        (
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1.nip.io\r\n",
            "Host header '127.0.0.1.nip.io' is not a loopback name: this server listens on "
            "loopback only and answers Host: localhost, 127.0.0.1 or [::1] (any port); to serve "
            "other names, set HOST to an address on the network",
        ),
        ("POST /mcp HTTP/1.0\r\n", "Host header is required; this server listens on loopback"),
    ],
)
async def test_a_request_not_addressed_to_loopback_is_421_naming_the_header(
    loopback_url: str, head: str, message: str
) -> None:
    status, body = await raw_exchange(loopback_url, head)
    assert status == 421
    assert body["id"] is None
    error = body["error"]
    assert isinstance(error, dict) and error["code"] == -32004
    assert error["message"].startswith(message)


async def test_the_official_client_connects_by_loopback_name(loopback_url: str) -> None:
    async with mcp_session(loopback_url) as client:
        assert "echo" in [tool.name for tool in (await client.list_tools()).tools]


async def test_health_answers_whatever_the_host(loopback_url: str) -> None:
    # Liveness never depends on a gate; it reveals nothing.
    reader, writer = await asyncio.open_connection("127.0.0.1", urlsplit(loopback_url).port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
    response = await reader.read()
    writer.close()
    assert response.startswith(b"HTTP/1.1 200")
