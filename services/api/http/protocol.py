"""What every answer of this process's HTTP listeners carries, whoever wrote it: the security
headers, and a ``Server`` header that names the product and no version of Python or aiohttp
(a version is a map of which published bugs apply). That includes the answers aiohttp writes
itself, for requests its parser refuses before any handler or middleware runs (a URL over the
line limit, a Host sent twice): ``RefusingRequestHandler`` answers those as the listener's
own refusal, naming the limit, and logs them without the request line.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, InvalidURLError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse
from aiohttp.web_server import Server

logger = logging.getLogger(__name__)

SERVER_HEADER: Final = "mcp-memory"
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


INVALID_REQUEST: Final = -32600
# aiohttp's first clause of a refusal, kept only when it is its own words and quotes nothing
# ("Invalid header token", "Bad status line", "Duplicate 'Host' header found").
_SAFE_CLAUSE: Final = re.compile(
    r"[A-Z][a-z]+(?: [A-Za-z-]+)*|Duplicate '[A-Za-z0-9-]{1,40}' header found"
)
_CLAUSE_CHARS: Final = 80


async def name_server(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: aiohttp only fills ``Server`` when nobody has."""
    response.headers["Server"] = SERVER_HEADER


async def secure_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: the security headers on every response, streamed ones
    too (an export is prepared inside its handler), and the ``Server`` name."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers["Server"] = SERVER_HEADER


# What a listener answers for a request aiohttp refused before any handler ran: status and a
# message naming the part and the limit, as a JSON-RPC error on the API, a page on /ui.
Refusal = Callable[[int, str], web.Response]


def json_refusal(status: int, message: str) -> web.Response:
    """The API's answer: a JSON-RPC "Invalid Request" error without an id."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return web.json_response(body, status=status)


def refusal_text(handler: RequestHandler, status: int, exc: BaseException | None) -> str:
    """What was wrong, in words that quote nothing of the request: aiohttp's own messages carry
    the request line or the header they stopped at (a search's words), so only their first
    clause is kept, and only when it quotes nothing."""
    if status >= 500:
        return "Internal error: nothing was changed. The server log says more."
    if isinstance(exc, LineTooLong):
        limits = sorted({handler.max_line_size, handler.max_field_size})
        limit = " or ".join(f"{value:,}" for value in limits)
        return (
            f"The request line (method and URL) or a header is longer than {limit} bytes, "
            "the most this port reads: nothing was done."
        )
    if isinstance(exc, InvalidURLError):
        return "The request's URL is not a valid URL: nothing was done."
    clause = str(getattr(exc, "message", "") or "").split("\n")[0].split(":")[0].strip().rstrip(".")
    if not clause or not _SAFE_CLAUSE.fullmatch(clause):
        clause = "the request is not valid HTTP/1.1"
    return f"Malformed request ({clause[:_CLAUSE_CHARS]}): nothing was done."


class RefusingRequestHandler(RequestHandler):
    """aiohttp's handler of one connection, answering what its parser refuses with the
    listener's own ``refuse`` (security headers included) and logging it as one JSON line that
    holds nothing of the request. aiohttp's own answer was ``400 text/plain`` quoting the
    request line, and its log line (at ERROR) quoted it too."""

    def __init__(self, manager: Server, *, refuse: Refusal, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._refuse = refuse

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError("a response was begun; its connection is closed")
        detail = {"status": status, "type": type(exc).__name__ if exc is not None else None}
        if status >= 500:
            logger.error("http_failed", extra=detail)
        else:
            logger.warning("http_refused", extra=detail)
        response = self._refuse(status, refusal_text(self, status, exc))
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        response.headers["Server"] = SERVER_HEADER
        response.force_close()
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        # aiohttp's free-text lines (and the exception's text) may quote the request. A body
        # that cannot be read while aiohttp drains it after the answer is the client's fault.
        exc_info = kw.get("exc_info")
        error = exc_info if isinstance(exc_info, BaseException) else None
        detail = {"type": type(error).__name__ if error is not None else None}
        if isinstance(error, (web.RequestPayloadError, HttpProcessingError)):
            logger.warning("http_refused", extra=detail)
        else:
            logger.error("http_failed", extra=detail)


def handler_factory(server: Server, refuse: Refusal) -> Callable[[], RequestHandler]:
    """What a listening socket makes per connection: ``server()``, with ``refuse`` answering."""
    kwargs: dict[str, Any] = dict(server._kwargs)  # what AppRunner was given: limits, timeouts
    loop = asyncio.get_running_loop()
    return lambda: RefusingRequestHandler(server, refuse=refuse, loop=loop, **kwargs)
