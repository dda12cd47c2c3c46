"""The memory page's aiohttp application, on a port of its own, apart from ``/mcp``: the MCP
endpoint refuses every browser (any ``Origin``), and this one is nothing but a browser's.

Every request passes one gate, in order: the ``Host`` of a loopback listener (DNS rebinding,
``services.api.http.host_header``), the session (a login page when the key is required and there is
none), and for a POST the origin and the form token (``access``). Every response carries a
Content-Security-Policy that lets the page load nothing but its own stylesheet and run no script
at all (it has none), and is never cached. Each request leaves one ``ui_request`` line: method,
path without its query string (which may hold a search), status and time; never a memory's text
or a query.
"""

from __future__ import annotations

import logging
import time
from importlib import resources
from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from services.api.http.connections import ConnectionGuard
from services.api.http.host_header import host_refusal
from services.api.http.protocol import secure_headers
from services.api.http.throttle import KeyThrottle
from services.api.ui import actions, views
from services.api.ui.access import CSRF_FIELD, Access, foreign_origin, is_https
from services.api.ui.forms import read_form
from services.api.ui.pages import ACCESS_KEY, OPERATIONS_KEY, SESSION_KEY, THROTTLE_KEY, render
from services.api.ui.query import PageState
from shared.errors import InvalidInputError, ServiceError
from shared.model.ids import is_tenant
from shared.operations import OperationsContext

logger = logging.getLogger(__name__)

UI_PATH: Final = "/ui"
LOGIN_PATH: Final = "/ui/login"
STATIC_PREFIX: Final = "/ui/static/"
# Forms hold at most a 32,000-byte memory; a little room for the other fields and encoding.
MAX_FORM_BYTES: Final = 256 * 1024
_STATIC_TYPES: Final = {".css": "text/css", ".svg": "image/svg+xml"}


def _error(request: web.Request, status: int, message: str) -> web.Response:
    return render(
        request,
        "error.html",
        status=status,
        state=PageState(),
        message=message,
    )


def _under_ui(path: str) -> bool:
    return path == UI_PATH or path.startswith(UI_PATH + "/")


async def _form_refusal(
    request: web.Request, access: Access, nonce: str | None
) -> web.Response | None:
    """A 403 for a form posted from another site, or (but the login form) without this
    session's token; None for a form that may change something."""
    origin = foreign_origin(request)
    if origin is not None:
        return _error(
            request,
            403,
            f"A form from another site (Origin {origin[:100]!a}) may not change anything here.",
        )
    form = await read_form(request)
    token = form.get(CSRF_FIELD)
    if request.path != LOGIN_PATH and not access.csrf_matches(
        nonce, token if isinstance(token, str) else None
    ):
        return _error(
            request,
            403,
            f"This form's token ({CSRF_FIELD}) is missing or belongs to another "
            "session, so nothing was changed. Reload the page and try again.",
        )
    return None


def _gate(access: Access, host_names: frozenset[str] | None) -> Middleware:
    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if host_names is not None:
            refused = host_refusal(request.headers, host_names)
            if refused is not None:
                return refused
        nonce = await access.current_session(request)
        if request.method == "POST":
            refused = await _form_refusal(request, access, nonce)
            if refused is not None:
                return refused
        elif request.method not in ("GET", "HEAD"):
            return _error(request, 405, f"{request.method} is not served here.")
        public = request.path == LOGIN_PATH or request.path.startswith(STATIC_PREFIX)
        issued = None
        if nonce is None and access.requires_key and not public:
            return render(
                request,
                "login.html",
                status=401,
                state=PageState(),
                next_url=request.path_qs,
                failed=False,
            )
        if nonce is None and not access.requires_key and _under_ui(request.path):
            # No key to ask for (a loopback --local server): the first page opens the session
            # its forms' tokens are bound to. Only a page under /ui, where the cookie is sent:
            # elsewhere (/, a 404) the browser sends none, and a new one would replace the
            # session of forms open in other tabs.
            issued = access.issue()
            nonce = issued.nonce
        if nonce is not None:
            request[SESSION_KEY] = nonce
        response = await handler(request)
        if issued is not None:
            access.set_cookie(response, issued, secure=is_https(request))
        return response

    return gate


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A refusal is a page that names the field and its limit; a failure is a page that says
    what failed, never a traceback."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        return _error(request, 404, "There is no such page: the memory page is at /ui.")
    except web.HTTPMethodNotAllowed:
        return _error(request, 405, f"{request.method} is not served here.")
    except web.HTTPRequestEntityTooLarge:
        return _error(
            request,
            413,
            f"The form is larger than {MAX_FORM_BYTES // 1024} KB: nothing was changed.",
        )
    except web.HTTPException:
        raise
    except InvalidInputError as error:
        return _error(request, 400, str(error))
    except ServiceError as error:
        logger.error("ui_failed", extra={"path": request.path, "type": type(error).__name__})
        return _error(request, 503, "The memory store could not complete this request; try again.")
    except Exception as error:  # noqa: BLE001 - the page's one catch-all, as the tools' guard
        logger.error("ui_failed", extra={"path": request.path, "type": type(error).__name__})
        return _error(
            request, 500, "Internal error: nothing was changed. The server log says more."
        )


def _logged(guard: ConnectionGuard | None) -> Middleware:
    @web.middleware
    async def logged(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        status = 500
        try:
            if guard is None:
                response = await handler(request)
            else:
                with guard.handling(request):
                    response = await handler(request)
            status = response.status
            return response
        finally:
            tenant = request.query.get("tenant", "")
            logger.info(
                "ui_request",
                extra={
                    "method": request.method,
                    "path": request.path,
                    "status": status,
                    "ms": round((time.perf_counter() - started) * 1000),
                    **({"tenant": tenant} if is_tenant(tenant) else {}),
                },
            )

    return logged


def _static() -> dict[str, tuple[bytes, str]]:
    """Every asset the page loads, read once: the process serves them all itself."""
    folder = resources.files("services.api.ui") / "static"
    assets: dict[str, tuple[bytes, str]] = {}
    for item in folder.iterdir():
        suffix = item.name[item.name.rfind(".") :]
        if suffix in _STATIC_TYPES:
            assets[item.name] = (item.read_bytes(), _STATIC_TYPES[suffix])
    return assets


def build_ui_app(
    ops: OperationsContext,
    *,
    access: Access,
    host_names: frozenset[str] | None,
    guard: ConnectionGuard | None = None,
    throttle: KeyThrottle | None = None,
) -> web.Application:
    """The page over ``ops``, its sessions and key by ``access`` (without a key it is
    served without a login: config allows that only on a loopback ``--local`` server);
    ``host_names`` as for the API's gates; ``throttle`` the process's count of wrong keys."""
    app = web.Application(
        client_max_size=MAX_FORM_BYTES,
        middlewares=[_logged(guard), _errors, _gate(access, host_names)],
    )
    app[OPERATIONS_KEY] = ops
    app[ACCESS_KEY] = access
    app[THROTTLE_KEY] = throttle or KeyThrottle()
    assets = _static()

    async def asset(request: web.Request) -> web.StreamResponse:
        found = assets.get(request.match_info["name"])
        if found is None:
            raise web.HTTPNotFound()
        body, content_type = found
        return web.Response(body=body, content_type=content_type)

    async def home(request: web.Request) -> web.StreamResponse:
        return web.Response(status=302, headers={"Location": UI_PATH})

    app.on_response_prepare.append(secure_headers)
    app.router.add_get("/", home)
    app.router.add_get(UI_PATH, views.page)
    app.router.add_get(f"{UI_PATH}/", views.page)
    app.router.add_get(STATIC_PREFIX + "{name}", asset)
    app.router.add_post(f"{UI_PATH}/forget", actions.forget)
    app.router.add_post(f"{UI_PATH}/replace", actions.replace)
    app.router.add_post(f"{UI_PATH}/export", actions.export)
    app.router.add_post(LOGIN_PATH, actions.login)
    app.router.add_post(f"{UI_PATH}/logout", actions.logout)
    return app
