"""What every answer of this process's HTTP listeners carries, whoever wrote it: the security
headers, and a ``Server`` header that names the product and no version of Python or aiohttp
(a version is a map of which published bugs apply)."""

from __future__ import annotations

from typing import Final

from aiohttp import web

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


async def name_server(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: aiohttp only fills ``Server`` when nobody has."""
    response.headers["Server"] = SERVER_HEADER


async def secure_headers(request: web.BaseRequest, response: web.StreamResponse) -> None:
    """An ``on_response_prepare`` hook: the security headers on every response, streamed ones
    too (an export is prepared inside its handler), and the ``Server`` name."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers["Server"] = SERVER_HEADER
