"""A loopback TCP proxy that passes bytes through, resets every connection, or accepts and never
answers: an endpoint's outage as the client's socket sees it.

It works below HTTP on purpose. botocore keeps connections pooled, so an outage has to reach a
connection opened before it as well as new ones: a byte arriving on a pooled connection is what
the mode is applied to. ``reset`` closes with an RST (SO_LINGER 0), which is what a client reads
as "connection reset by peer"; ``stall`` reads and drops what the client sends, so its request
waits for an answer that never comes, as behind a black-holing load balancer. Switching back to
``pass`` ends the outage for the next connection (clients close their stalled ones when they give
up).

Put it in front of moto or the S3 Vectors fake::

    async with TcpFaultProxy.running(upstream_url) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3VECTORS", proxy.url)
        proxy.mode = "reset"
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator
from typing import Literal
from urllib.parse import urlsplit

Mode = Literal["pass", "reset", "stall"]

_CHUNK = 64 * 1024


def _reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        # Linger 0: close() sends RST instead of FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class TcpFaultProxy:
    """Listens on 127.0.0.1 (``url``) and forwards to ``upstream`` while ``mode`` is ``pass``."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        if parts.hostname is None or parts.port is None:
            raise ValueError(f"upstream must be http://host:port, got {upstream!r}")
        self._upstream = (parts.hostname, parts.port)
        self.mode: Mode = "pass"
        self.url = ""
        # Connections each fault reached (new ones, or pooled ones that sent a byte during it),
        # for tests that assert the outage was met rather than bypassed.
        self.faulted: dict[Mode, int] = {"reset": 0, "stall": 0}
        self._handlers: set[asyncio.Task[None]] = set()
        self._open: set[asyncio.StreamWriter] = set()

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, upstream: str) -> AsyncIterator[TcpFaultProxy]:
        proxy = cls(upstream)
        server = await asyncio.start_server(proxy._accept, "127.0.0.1", 0)
        host, port = server.sockets[0].getsockname()[:2]
        proxy.url = f"http://{host}:{port}"
        try:
            yield proxy
        finally:
            server.close()
            # Closing the sockets ends every handler; cancelling one instead makes asyncio's
            # stream server log the CancelledError as an unhandled exception.
            for writer in list(proxy._open):
                writer.transport.abort()
            await asyncio.gather(*proxy._handlers, return_exceptions=True)
            await server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._open.add(writer)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError):
            pass
        finally:
            self._handlers.discard(task)
            self._open.discard(writer)
            if not writer.transport.is_closing():
                writer.transport.abort()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mode == "reset":
            self.faulted["reset"] += 1
            _reset(writer)
            return
        if self.mode == "stall":
            self.faulted["stall"] += 1
            while await reader.read(_CHUNK):
                pass
            return
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        self._open.add(up_writer)
        try:
            await asyncio.gather(
                self._pump(reader, up_writer, client=writer),
                self._pump(up_reader, writer, client=writer),
                return_exceptions=True,
            )
        finally:
            self._open.discard(up_writer)
            up_writer.transport.abort()

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        *,
        client: asyncio.StreamWriter,
    ) -> None:
        stalled = False
        while data := await source.read(_CHUNK):
            if self.mode == "reset":
                self.faulted["reset"] += 1
                _reset(client)
                return
            if self.mode == "stall":
                self.faulted["stall"] += not stalled
                stalled = True
                continue  # swallowed: the request (or its answer) never arrives
            sink.write(data)
            await sink.drain()
        # One side finished: half-close the other so an HTTP exchange can complete.
        if sink.can_write_eof() and not sink.transport.is_closing():
            sink.write_eof()
