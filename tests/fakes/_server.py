"""What both fake embedding servers share: a real aiohttp server on 127.0.0.1 and its knobs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Failure:
    """An error answer: HTTP status, an error code (Bedrock's x-amzn-ErrorType) and a message."""

    status: int
    code: str
    message: str


@dataclass
class Knobs:
    """Misbehaviour on demand. Tests set these; :meth:`reset` restores a well-behaved server.

    Attributes:
        width: answer with this many dimensions instead of the requested/configured width.
        all_zero: answer with a vector of zeros.
        failure: answer every request with this error (while ``fail_times`` allows).
        fail_times: how many requests ``failure`` applies to; None means all of them.
        delay_s: wait this long before answering (a slow or hung service).
        non_numeric: put a string into the vector.
        no_embedding: answer 200 with no vector in it (Bedrock ``{}``, OpenAI ``data: []``).
    """

    width: int | None = None
    all_zero: bool = False
    failure: Failure | None = None
    fail_times: int | None = None
    delay_s: float = 0.0
    non_numeric: bool = False
    no_embedding: bool = False

    def reset(self) -> None:
        fresh = Knobs()
        for name in (
            "width",
            "all_zero",
            "failure",
            "fail_times",
            "delay_s",
            "non_numeric",
            "no_embedding",
        ):
            setattr(self, name, getattr(fresh, name))

    def take_failure(self) -> Failure | None:
        if self.failure is None:
            return None
        if self.fail_times is not None:
            if self.fail_times <= 0:
                return None
            self.fail_times -= 1
        return self.failure

    def shape(self, vector: list[float]) -> list[Any]:
        """Apply width / zero / non-numeric knobs to a well-formed vector."""
        shaped: list[Any] = list(vector)
        if self.width is not None:
            shaped = (shaped * (self.width // max(1, len(shaped)) + 1))[: self.width]
        if self.all_zero:
            shaped = [0.0] * len(shaped)
        if self.non_numeric and shaped:
            shaped[0] = "0.5"
        return shaped


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeHttpServer:
    """Starts ``app`` on 127.0.0.1 with an OS-chosen port; ``base_url`` is set once started."""

    app: web.Application
    knobs: Knobs = field(default_factory=Knobs)
    requests: list[RecordedRequest] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        if not self.port:
            raise RuntimeError("the fake server is not started")
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        # A hung (delay_s) handler must not hold up teardown for long.
        self._runner = web.AppRunner(
            self.app, access_log=None, handle_signals=False, shutdown_timeout=0.1
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def delay(self) -> None:
        if self.knobs.delay_s:
            await asyncio.sleep(self.knobs.delay_s)


class FakeService:
    """What every fake remote service exposes to tests: its URL, knobs, recorded requests and
    lifecycle, all delegated to the one :class:`FakeHttpServer` it runs on."""

    def __init__(self, app: web.Application) -> None:
        self._server = FakeHttpServer(app)

    @property
    def base_url(self) -> str:
        """What to point the client at (``endpoint_url``, or a base URL)."""
        return self._server.origin

    @property
    def knobs(self) -> Knobs:
        return self._server.knobs

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._server.requests

    async def start(self) -> None:
        await self._server.start()

    async def stop(self) -> None:
        await self._server.stop()

    async def admit_signed(self, request: web.Request, body: Any) -> Failure | None:
        """What every AWS fake does first: record the request, apply the delay knob, then refuse
        an unsigned request (403) or answer the next injected failure. None: go on."""
        self.requests.append(RecordedRequest(request.path, dict(request.headers), body))
        await self._server.delay()
        if not request.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256 Credential="):
            return Failure(403, "AccessDeniedException", "Missing Authentication Token")
        return self.knobs.take_failure()
