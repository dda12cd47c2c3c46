"""``GET /`` on the MCP port: a short pointer to ``/mcp`` and the memory page, for whoever opens
the server's address by hand (a browser gets a line of HTML, anything else JSON).

It needs no tenant and no key: it says nothing but paths, the header a call needs and the
page's port, which the process's own start-up line says too. The URLs are written with the host
the request was sent to, so they work from wherever the caller is; a Host that is not a plain
name or address is not echoed (it could carry markup), and the pointer then gives paths alone.
"""

from __future__ import annotations

import html
import re
from typing import Final

from aiohttp import web

from services.api.http.protocol import SECURITY_HEADERS

ROOT_PATH: Final = "/"
_HOST: Final = re.compile(r"(?P<name>[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?")
_HTML: Final = "text/html"
_JSON: Final = "application/json"


class PagePointer:
    """Where the memory page listens, once it does: set after the page's listener starts
    (its port may be chosen by the OS), read by each ``GET /``."""

    def __init__(self) -> None:
        self.port: int | None = None


POINTER_KEY: Final = web.AppKey("page_pointer", PagePointer)


def wants_html(accept: str) -> bool:
    """Whether an Accept header prefers HTML to JSON (a browser's does; curl's ``*/*`` and a
    client's ``application/json`` do not). Ties go to JSON."""
    best = {_HTML: 0.0, _JSON: 0.0}
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        media = media.lower()
        if media in best:
            best[media] = max(best[media], quality)
    return best[_HTML] > best[_JSON]


def _request_host(request: web.Request) -> str | None:
    """The Host the request named, without its port; None when it is not a plain name or
    address."""
    match = _HOST.fullmatch(request.headers.get("Host", ""))
    return match.group("name") if match else None


def _urls(request: web.Request) -> tuple[str, str | None]:
    """The MCP endpoint and the page as this caller reaches them (paths alone without a
    usable Host); the page None when it is not served."""
    port = request.app[POINTER_KEY].port
    host = _request_host(request)
    if host is None:
        return "/mcp", (None if port is None else f"http://<host>:{port}/ui")
    mcp = f"http://{request.headers['Host']}/mcp"
    return mcp, (None if port is None else f"http://{host}:{port}/ui")


async def pointer(request: web.Request) -> web.StreamResponse:
    """``GET /``: JSON for clients, one line of HTML for a browser (by the Accept header)."""
    mcp, page = _urls(request)
    if wants_html(request.headers.get("Accept", "")):
        link = (
            f'The memory page is at <a href="{html.escape(page)}">{html.escape(page)}</a>.'
            if page is not None
            else "This server does not serve the memory page."
        )
        body = (
            "<!doctype html><meta charset=utf-8><title>mcp-memory</title><p>This is an MCP "
            f"server: MCP clients send JSON-RPC with POST to <code>{html.escape(mcp)}</code> "
            f"with an <code>X-Memory-Tenant</code> header naming the project. {link}</p>\n"
        )
        headers = {**SECURITY_HEADERS, "Vary": "Accept"}
        return web.Response(text=body, content_type=_HTML, headers=headers)
    return web.json_response(
        {
            "mcp": mcp,
            "transport": "streamable-http: POST JSON-RPC",
            "tenant_header": "X-Memory-Tenant",
            "page": page,
        },
        headers={"Vary": "Accept"},
    )
