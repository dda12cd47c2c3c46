"""The API's aiohttp application: the gates, ``POST /mcp``, ``/health``, ``/ready``,
``/metrics`` and ``GET /`` (a pointer to ``/mcp`` and the memory page).

The runtime (stores, embedder, counters) is entered by one ``cleanup_ctx``. aiohttp runs startup
inside ``AppRunner.setup()``, before any site listens, so the port is bound only once the stores
are open and the schema exists; and cleanup runs after the sites have stopped and in-flight
requests have finished, so the final counter flush sees every call that was answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from prometheus_client.aiohttp import make_aiohttp_handler

from services.api.http.connections import ConnectionGuard
from services.api.http.gates import MCP_PATH, METRICS_PATH, gates_middleware
from services.api.http.host_header import loopback_names
from services.api.http.mcp_transport import MAX_BODY_BYTES, McpEndpoint
from services.api.http.pointer import POINTER_KEY, ROOT_PATH, PagePointer, pointer
from services.api.http.protocol import name_server
from services.api.http.readiness import READY_PATH, ready_response
from services.api.http.throttle import KeyThrottle
from services.api.storage_probe import ReadinessCheck
from services.api.tools.definition import ToolSpec
from shared.config import Config
from shared.process.version import installed_version

if TYPE_CHECKING:
    from shared.operations import OperationsContext
    from shared.storage import ObjectStore


class RuntimeView(Protocol):
    """What the HTTP layer reads from ``services.api.runtime.Runtime``."""

    @property
    def catalogue(self) -> tuple[ToolSpec, ...]: ...

    @property
    def boot_lines(self) -> tuple[str, ...]: ...

    @property
    def check_ready(self) -> ReadinessCheck: ...

    # The memory page's way to the tools' operations; None in a runtime without storage.
    @property
    def operations(self) -> OperationsContext | None: ...

    # The state store the memory page keeps its shared sessions in; None without storage.
    @property
    def objects(self) -> ObjectStore | None: ...


RuntimeOpener = Callable[[Config], AbstractAsyncContextManager[RuntimeView]]

RUNTIME_KEY = web.AppKey("runtime", RuntimeView)
ENDPOINT_KEY = web.AppKey("mcp_endpoint", McpEndpoint)


async def _mcp(request: web.Request) -> web.StreamResponse:
    return await request.app[ENDPOINT_KEY].handle(request)


async def _ready(request: web.Request) -> web.StreamResponse:
    return await ready_response(request.app[RUNTIME_KEY].check_ready)


async def _mcp_method_not_allowed(request: web.Request) -> web.StreamResponse:
    # Stateless JSON-only: no GET stream to open and no session to DELETE.
    return web.json_response(
        {"error": f"{request.method} is not allowed on /mcp; send JSON-RPC with POST"},
        status=405,
        headers={"Allow": "POST"},
    )


def _handling_middleware(guard: ConnectionGuard) -> Middleware:
    @web.middleware
    async def handling(request: web.Request, handler: Handler) -> web.StreamResponse:
        with guard.handling(request):
            return await handler(request)

    return handling


def build_app(
    config: Config,
    *,
    open_runtime: RuntimeOpener,
    guard: ConnectionGuard | None = None,
    throttle: KeyThrottle | None = None,
) -> web.Application:
    """The application over the runtime ``open_runtime`` opens (``services.api.runtime`` in a
    real process, a test catalogue in tests). ``guard`` (see ``connections``) is told when each
    request is being handled; ``throttle`` counts wrong keys per address (``throttle``)."""
    version = installed_version()

    async def runtime_context(app: web.Application) -> AsyncIterator[None]:
        async with open_runtime(config) as runtime:
            app[RUNTIME_KEY] = runtime
            app[ENDPOINT_KEY] = McpEndpoint(runtime.catalogue, version=version)
            yield

    middlewares = [
        gates_middleware(
            api_key=config.server.mcp_api_key,
            host_names=loopback_names(config.server.hosts),
            throttle=throttle,
        )
    ]
    if guard is not None:
        middlewares.insert(0, _handling_middleware(guard))
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=middlewares)
    app[POINTER_KEY] = PagePointer()
    app.cleanup_ctx.append(runtime_context)
    app.on_response_prepare.append(name_server)
    app.router.add_post(MCP_PATH, _mcp)
    app.router.add_route("*", MCP_PATH, _mcp_method_not_allowed)
    app.router.add_get(METRICS_PATH, make_aiohttp_handler())
    app.router.add_get(READY_PATH, _ready)
    app.router.add_get(ROOT_PATH, pointer)
    # /health and every unknown path are answered by the gates, whatever the router matched.
    return app
