"""HTML out of templates: one Jinja2 environment, escaping everything it is given (a memory's
text is data, never markup), and the keys a request and the application carry for it."""

from __future__ import annotations

import functools
from typing import Any, Final

from aiohttp import web
from jinja2 import Environment, PackageLoader, StrictUndefined

from services.api.http.throttle import KeyThrottle
from services.api.tools.render import PREVIEW_CHARS, flattened
from services.api.ui.access import CSRF_FIELD, Access
from services.api.ui.query import PageState
from shared.model import iso_ms
from shared.operations import OperationsContext

OPERATIONS_KEY: Final = web.AppKey("ui_operations", OperationsContext)
ACCESS_KEY: Final = web.AppKey("ui_access", Access)
# Wrong keys per address: the process's one count, shared with /mcp.
THROTTLE_KEY: Final = web.AppKey("ui_throttle", KeyThrottle)
# The session's nonce, once the gate has found or issued one.
SESSION_KEY: Final = web.RequestKey("ui_session", str)


def _day(iso: str | None) -> str:
    return iso[:10] if iso else ""


def _stamp(iso: str | None) -> str:
    """``2026-01-02T03:04:05.678Z`` as ``2026-01-02 03:04 UTC``."""
    return f"{iso[:10]} {iso[11:16]} UTC" if iso else ""


def _stored_date(ms: int | None) -> str:
    """A stored-time bound as a date field holds it (``2026-01-02``; a time is not shown)."""
    return iso_ms(ms)[:10] if ms is not None else ""


_ENV: Final = Environment(
    loader=PackageLoader("services.api.ui", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["day"] = _day
_ENV.filters["stamp"] = _stamp
_ENV.filters["stored_date"] = _stored_date
# A memory's first PREVIEW_CHARS on one line, as list_memories previews it.
_ENV.filters["preview"] = functools.partial(flattened, chars=PREVIEW_CHARS)


def render(
    request: web.Request, template: str, *, status: int = 200, **context: Any
) -> web.Response:
    """``template`` rendered with ``context``, plus what every page needs: the form token of
    this request's session and whether the page is behind the key."""
    access = request.app[ACCESS_KEY]
    nonce = request.get(SESSION_KEY)
    text = _ENV.get_template(template).render(
        csrf_field=CSRF_FIELD,
        csrf=access.csrf_token(nonce) if nonce is not None else "",
        requires_key=access.requires_key,
        **context,
    )
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def refused_page(status: int, message: str) -> web.Response:
    """The page's answer to a request refused before any of its handlers ran (``protocol``):
    the error page, with no session (there is no request to read one from)."""
    text = _ENV.get_template("error.html").render(
        csrf_field=CSRF_FIELD, csrf="", requires_key=False, state=PageState(), message=message
    )
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")
