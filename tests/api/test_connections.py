"""Slow, half-sent and too many connections: each is bounded, and a bound answers or closes
instead of holding a connection forever. Raw sockets, because a well-behaved client never sends
these."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from services.api.http.app import build_app
from services.api.http.connections import ConnectionGuard, GuardedSite
from services.api.http.mcp_transport import BODY_READ_TIMEOUT_S
from tests.api._catalogue import catalogue_runtime
from tests.api._process import CONSOLE_SCRIPT, clean_env, start, stop
from tests.api.conftest import test_config as make_config

HEADER_TIMEOUT_S = 1.0
MAX_CONNECTIONS = 8
TENANT_HEADER = "X-Memory-Tenant: acme\r\n"


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[int, ConnectionGuard]]:
    guard = ConnectionGuard(max_connections=MAX_CONNECTIONS, header_timeout_s=HEADER_TIMEOUT_S)
    app = build_app(make_config(), open_runtime=catalogue_runtime(), guard=guard)
    # aiohttp's keep-alive timeout also closes a connection that sends nothing; set far off so
    # that what is tested here is the guard's own deadline.
    runner = web.AppRunner(app, shutdown_timeout=2, keepalive_timeout=30)
    await runner.setup()
    site = GuardedSite(runner, guard, host="127.0.0.1", port=0)
    await site.start()
    yield runner.addresses[0][1], guard
    await runner.cleanup()


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before closing; fails if it did not close in time."""
    return await asyncio.wait_for(reader.read(), seconds)


def request(body: bytes, *, length: int | None = None) -> bytes:
    return (
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\n{TENANT_HEADER}"
        f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    ).encode() + body


ECHO = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
).encode()


@pytest.mark.parametrize(
    "sent",
    [b"POST /mcp HTTP/1.1\r\n", b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: appl", b""],
)
async def test_a_request_whose_headers_never_finish_is_closed(
    guarded: tuple[int, ConnectionGuard], sent: bytes
) -> None:
    port, guard = guarded
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(sent)
    started = time.monotonic()
    assert await closed_within(reader, HEADER_TIMEOUT_S + 2) == b""
    assert time.monotonic() - started >= HEADER_TIMEOUT_S * 0.9
    assert guard.timed_out == 1 and guard.open == 0
    writer.close()


async def test_headers_trickled_a_byte_at_a_time_are_closed_at_the_deadline(
    guarded: tuple[int, ConnectionGuard],
) -> None:
    """Slowloris: every byte resets an idle timer, never the guard's deadline."""
    port, guard = guarded
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    for byte in b"POST /mcp HTTP/1.1\r\nHost: a-very-long-host-name\r\n":
        if writer.is_closing() or reader.at_eof():
            break
        try:
            writer.write(bytes([byte]))
            await writer.drain()
        except ConnectionError:
            break
        await asyncio.sleep(0.05)
        if time.monotonic() - started > HEADER_TIMEOUT_S + 1:
            break
    assert await closed_within(reader, 2) == b""
    assert HEADER_TIMEOUT_S * 0.9 <= time.monotonic() - started <= HEADER_TIMEOUT_S + 2
    assert guard.timed_out == 1
    writer.close()


async def test_a_body_shorter_than_its_content_length_is_a_408(
    guarded: tuple[int, ConnectionGuard],
) -> None:
    port, _ = guarded
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request(ECHO[:10], length=len(ECHO)))
    answer = await asyncio.wait_for(reader.read(), BODY_READ_TIMEOUT_S + 3)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408")
    assert "did not arrive within" in json.loads(body)["error"]["message"]
    writer.close()


async def test_a_slow_handler_is_not_a_slow_client(guarded: tuple[int, ConnectionGuard]) -> None:
    """No deadline while a request is handled: a tool slower than the header timeout answers."""
    port, guard = guarded
    slow = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": HEADER_TIMEOUT_S * 2}},
        }
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request(slow))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEADER_TIMEOUT_S * 4)
    assert head.startswith(b"HTTP/1.1 200"), head
    assert guard.timed_out == 0
    writer.close()


async def test_past_the_connection_limit_a_new_connection_gets_503_with_retry_after(
    guarded: tuple[int, ConnectionGuard],
) -> None:
    port, guard = guarded
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(MAX_CONNECTIONS)]
    await asyncio.sleep(0.1)
    assert guard.open == MAX_CONNECTIONS
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answer = await closed_within(reader, 2)
    assert answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 1" in answer
    # Written by hand, before aiohttp: still with every answer's headers.
    assert b"X-Content-Type-Options: nosniff\r\n" in answer
    assert b"Server: mcp-memory\r\n" in answer
    assert guard.refused == 1
    for _, held_writer in held:
        held_writer.close()
    writer.close()
    await asyncio.sleep(0.1)
    # Capacity is back once they are gone: a whole request is served again.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request(ECHO))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 200")
    writer.close()


async def test_the_real_process_closes_a_bare_request_line(pg_url: str) -> None:
    """mcp-memory-api serves through the guard (10 s for headers; aiohttp's own keep-alive
    timeout, 5 s, closes a connection that sends nothing more even sooner)."""
    api = await start(
        [str(CONSOLE_SCRIPT), "--port", "0"],
        clean_env(DATABASE_URL=pg_url, EMBEDDING_PROVIDER="local"),
    )
    try:
        listening = await api.wait_for("listening")
        reader, writer = await asyncio.open_connection("127.0.0.1", listening["port"])
        writer.write(b"POST /mcp HTTP/1.1\r\n")
        started = time.monotonic()
        assert await closed_within(reader, 15) == b""
        assert time.monotonic() - started <= 11
        writer.close()
    finally:
        await stop(api)
