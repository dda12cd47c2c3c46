"""A reverse proxy in front of moto that answers chosen requests itself, over real HTTP.

moto cannot produce some answers real S3 gives — a 409 ConditionalRequestConflict when two
conditional writes race, or per-key errors inside a DeleteObjects 200 — so a test installs a rule
here that answers those with S3's own wire format while every other request passes through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import aiohttp
from aiohttp import web

Rule = Callable[[web.Request, bytes], web.Response | None]

_HOP_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})


def s3_error(status: int, code: str, message: str) -> web.Response:
    body = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    return web.Response(status=status, body=body.encode(), content_type="application/xml")


class FaultProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.rules: list[Rule] = []
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    async def _forward(self, request: web.Request) -> web.Response:
        body = await request.read()
        for rule in self.rules:
            answer = rule(request, body)
            if answer is not None:
                return answer
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        async with self._session.request(
            request.method,
            self.upstream + request.path_qs,
            headers=headers,
            data=body,
            allow_redirects=False,
        ) as upstream:
            payload = await upstream.read()
            passed = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_HEADERS}
            return web.Response(status=upstream.status, body=payload, headers=passed)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[FaultProxy]:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._session = aiohttp.ClientSession(auto_decompress=False)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        host, port = self._runner.addresses[0][:2]
        self.url = f"http://{host}:{port}"
        try:
            yield self
        finally:
            await self._runner.cleanup()
            await self._session.close()
