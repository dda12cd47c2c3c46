"""Bounds on connections: how many may be open, and how long one may take to send a request.

aiohttp has no timeout for a request's headers: a bare request line, or headers never finished,
holds a connection forever (a fault campaign found such connections still open minutes later).
A body shorter than its Content-Length does the same inside the handler (that read is bounded in
``mcp_transport``). Here every connection is wrapped, at the asyncio protocol level:

- beyond ``MAX_CONNECTIONS`` open at once, a new one is answered ``503`` with ``Retry-After``
  and closed, before aiohttp reads anything;
- a connection that has not sent a whole request's headers ``HEADER_TIMEOUT_S`` after it opened,
  or after its previous response, is closed (an idle keep-alive connection is closed sooner by
  aiohttp's own keep-alive timeout; this catches one that began a request and stalled).

While a request is being handled its connection has no deadline (a slow recall is not a slow
client): ``ConnectionGuard.handling`` brackets it, from the first middleware.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, Final

from aiohttp import web

from services.api.http.protocol import (
    SECURITY_HEADERS,
    SERVER_HEADER,
    Refusal,
    handler_factory,
    json_refusal,
)

logger = logging.getLogger(__name__)

MAX_CONNECTIONS: Final = 256
HEADER_TIMEOUT_S: Final = 10.0
# Shorter than the header timeout: an idle connection after a response goes first, quietly.
KEEPALIVE_TIMEOUT_S: Final = 5.0
RETRY_AFTER_S: Final = 1

_BUSY_BODY: Final = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32003, "message": "the server is at its connection limit; retry"},
    }
).encode()
# Written before aiohttp sees the connection, so it carries what protocol.py puts on every
# other answer by hand.
_BUSY_RESPONSE: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"Content-Type: application/json\r\n"
    + f"Retry-After: {RETRY_AFTER_S}\r\nContent-Length: {len(_BUSY_BODY)}\r\n".encode()
    + "".join(f"{name}: {value}\r\n" for name, value in SECURITY_HEADERS.items()).encode()
    + f"Server: {SERVER_HEADER}\r\n".encode()
    + b"Connection: close\r\n\r\n"
    + _BUSY_BODY
)


class ConnectionGuard:
    """Counts open connections and watches each for a request starting in time."""

    def __init__(
        self,
        *,
        max_connections: int = MAX_CONNECTIONS,
        header_timeout_s: float = HEADER_TIMEOUT_S,
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self.open = 0
        self.refused = 0
        self.timed_out = 0
        self._watched: weakref.WeakKeyDictionary[asyncio.BaseTransport, _Guarded] = (
            weakref.WeakKeyDictionary()
        )

    def protocol(self, inner: asyncio.Protocol) -> asyncio.Protocol:
        return _Guarded(self, inner)

    @contextlib.contextmanager
    def handling(self, request: web.BaseRequest) -> Iterator[None]:
        """Around one request's handling: no deadline meanwhile, a fresh one after."""
        transport = request.transport
        guarded = self._watched.get(transport) if transport is not None else None
        if guarded is not None:
            guarded.disarm()
        try:
            yield
        finally:
            if guarded is not None:
                guarded.arm()


class _Guarded(asyncio.Protocol):
    """aiohttp's protocol for one connection, with the guard in front of it."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self._transport: asyncio.Transport | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        guard = self._guard
        if guard.open >= guard.max_connections:
            guard.refused += 1
            transport.write(_BUSY_RESPONSE)
            transport.close()
            return
        guard.open += 1
        self._counted = True
        guard._watched[transport] = self
        self.arm()
        self._inner.connection_made(transport)

    def arm(self) -> None:
        self.disarm()
        if self._transport is not None and not self._transport.is_closing():
            loop = asyncio.get_running_loop()
            self._deadline = loop.call_later(self._guard.header_timeout_s, self._expire)

    def disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        # A full timeout since the connection opened or its last response, and no request
        # reached the handler: headers that never came.
        self._guard.timed_out += 1
        logger.info("connection_timed_out", extra={"seconds": self._guard.header_timeout_s})
        transport.abort()

    def data_received(self, data: bytes) -> None:
        if self._counted:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._counted else None

    def pause_writing(self) -> None:
        if self._counted:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._counted:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.disarm()
        self._transport = None
        if self._counted:
            self._counted = False
            self._guard.open -= 1
            self._inner.connection_lost(exc)


class GuardedSite(web.TCPSite):
    """``web.TCPSite`` whose connections pass through a ConnectionGuard, and whose requests
    aiohttp's parser refuses are answered by ``refuse`` (``protocol.RefusingRequestHandler``).
    ``hosts``, when given, replaces TCPSite's single ``host``: one listening socket per
    address."""

    def __init__(
        self,
        runner: web.BaseRunner,
        guard: ConnectionGuard,
        *,
        refuse: Refusal = json_refusal,
        hosts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(runner, **kwargs)
        self._guard = guard
        self._refuse = refuse
        self._hosts: str | list[str] | None = list(hosts) if hosts is not None else self._host

    async def start(self) -> None:
        # TCPSite.start, with the protocol factory wrapped (aiohttp offers no hook for it).
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        handler = handler_factory(server, self._refuse)
        self._server = await loop.create_server(
            lambda: self._guard.protocol(handler()),
            self._hosts,
            self._port,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
            reuse_port=self._reuse_port,
        )
