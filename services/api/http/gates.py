"""The HTTP gates in front of ``/mcp``, in order: health, unknown paths, browser origins, the
Host of a loopback listener, bearer.

``/health`` answers before anything else so a liveness probe never depends on auth or storage.
Every other path but ``/mcp``, ``/ready``, ``/metrics`` and ``/`` (a pointer to ``/mcp`` and the
memory page, ``pointer``) is a 404. A request carrying ``Origin``
is refused before auth: this cluster-internal endpoint has no browser caller, and Streamable HTTP
requires that boundary against DNS rebinding. On a loopback listener a request must also name a
loopback host (``host_header``). With MCP_API_KEY set, ``/mcp`` needs the key as a bearer token,
and wrong keys cost their address time (``throttle``).
"""

from __future__ import annotations

import hmac
from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from services.api.http.host_header import host_refusal
from services.api.http.mcp_transport import jsonrpc_error
from services.api.http.pointer import ROOT_PATH
from services.api.http.readiness import READY_PATH
from services.api.http.throttle import KeyThrottle

MCP_PATH: Final = "/mcp"
HEALTH_PATH: Final = "/health"
METRICS_PATH: Final = "/metrics"

UNAUTHORIZED_CODE: Final = -32001
BROWSER_ORIGIN_CODE: Final = -32002
THROTTLED_CODE: Final = -32005


def bearer_matches(authorization: str | None, *, key: str) -> bool:
    """Whether an Authorization value presents ``key`` as a bearer token, compared in constant time.

    The scheme is the text before the first space, case-insensitive; the token is the rest with
    leading whitespace stripped and nothing else, so ``BEARER  k`` passes and ``Bearer k `` fails.
    """
    if not authorization:
        return False
    scheme, _, token = authorization.partition(" ")
    token = token.lstrip()
    if scheme.lower() != "bearer" or not token:
        return False
    # Bytes, not str: compare_digest refuses non-ASCII strings, and a header may carry any byte.
    return hmac.compare_digest(
        token.encode("utf-8", "surrogateescape"), key.encode("utf-8", "surrogateescape")
    )


def _unauthorized() -> web.Response:
    response = jsonrpc_error(
        UNAUTHORIZED_CODE,
        "missing or invalid bearer token: send Authorization: Bearer <MCP_API_KEY>",
        status=401,
    )
    response.headers["WWW-Authenticate"] = 'Bearer realm="mcp"'
    return response


def _throttled(retry_after_s: int) -> web.Response:
    response = jsonrpc_error(
        THROTTLED_CODE,
        "too many wrong keys from this address: no key is checked from it for "
        f"{retry_after_s} s (Retry-After)",
        status=429,
    )
    response.headers["Retry-After"] = str(retry_after_s)
    return response


async def _key_refusal(
    request: web.Request, *, api_key: str, throttle: KeyThrottle
) -> web.Response | None:
    """The 429 or 401 of a request to /mcp without the key; None with it. Nothing awaits
    between the throttle's verdict and the check, so concurrent guesses are counted one by one."""
    client = throttle.client(request)
    retry_after = throttle.refusal(client, surface="mcp")
    if retry_after is not None:
        return _throttled(retry_after)
    authorization = request.headers.get("Authorization")
    if bearer_matches(authorization, key=api_key):
        throttle.succeeded(client)
        return None
    if authorization:  # a key was presented, and it was wrong: a guess
        await throttle.failed(client, surface="mcp")
    return _unauthorized()


def gates_middleware(
    *,
    api_key: str | None,
    host_names: frozenset[str] | None = None,
    throttle: KeyThrottle | None = None,
) -> Middleware:
    """The one middleware that applies every gate; ``api_key`` None means open mode,
    ``host_names`` None any Host (see ``host_header.loopback_names``); ``throttle`` counts
    wrong keys per address (the process's own, shared with the memory page)."""
    wrong_keys = throttle or KeyThrottle()

    @web.middleware
    async def gates(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if path == HEALTH_PATH:
            return web.json_response({"status": "ok"})
        if path not in (MCP_PATH, METRICS_PATH, READY_PATH, ROOT_PATH):
            return web.json_response({"error": "not found"}, status=404)
        if path == ROOT_PATH and request.method not in ("GET", "HEAD"):
            # A client given the server's address without /mcp: name the endpoint.
            return web.json_response(
                {"error": f"not found: MCP is served at POST {MCP_PATH}"}, status=404
            )
        if "Origin" in request.headers:
            return jsonrpc_error(BROWSER_ORIGIN_CODE, "browser origins are not allowed", status=403)
        if host_names is not None:
            refused = host_refusal(request.headers, host_names)
            if refused is not None:
                return refused
        if path == MCP_PATH and api_key is not None:
            refused = await _key_refusal(request, api_key=api_key, throttle=wrong_keys)
            if refused is not None:
                return refused
        return await handler(request)

    return gates
