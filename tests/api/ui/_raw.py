"""One HTTP/1.1 request written byte for byte over a real socket, for what no client library
will send: bytes that are not UTF-8 in a header, a Host twice, a request line of 100 KB."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import msgspec


class RawAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """The status, the headers (names lowercased; a repeated one keeps its last value) and the
    body; status 0 when the server closed the connection without answering."""

    status: int
    headers: dict[str, str]
    body: bytes


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


async def send(
    url: str,
    head: bytes,
    body: bytes = b"",
    *,
    local_host: str | None = None,
    timeout_s: float = 10.0,
) -> RawAnswer:
    """``head`` is the request line and headers, each ending CRLF, without the blank line."""
    host, port = address(url)
    local = (local_host, 0) if local_host is not None else None
    reader, writer = await asyncio.open_connection(host, port, local_addr=local)
    try:
        writer.write(head + b"\r\n" + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout_s)
    except ConnectionResetError:
        raw = b""
    finally:
        writer.close()
    if not raw:
        return RawAnswer(status=0, headers={}, body=b"")
    top, _, rest = raw.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawAnswer(status=int(lines[0].split(" ")[1]), headers=headers, body=rest)


def request_head(
    method: str, target: str, host: str, *headers: tuple[str, bytes | str], length: int = 0
) -> bytes:
    """A request's head with ``Connection: close`` (so the answer ends at EOF)."""
    lines = [f"{method} {target} HTTP/1.1".encode(), f"Host: {host}".encode()]
    for name, value in headers:
        lines.append(
            name.encode() + b": " + (value if isinstance(value, bytes) else value.encode())
        )
    if method == "POST":
        lines.append(f"Content-Length: {length}".encode())
    lines.append(b"Connection: close")
    return b"".join(line + b"\r\n" for line in lines)
