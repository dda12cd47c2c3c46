"""``POST /mcp``: MCP Streamable HTTP over the SDK's framework-independent kernel, statelessly.

Each POST is answered on its own with one ``application/json`` body: no SSE, no session id.
Both protocol eras share the endpoint. A request carrying the 2026-07-28 envelope (or the
protocol-version header naming a modern revision) runs the SDK's validation ladder and is served
per request; anything else — ``initialize`` first of all — is served in the handshake era on a
born-ready connection, as the SDK's own stateless legacy transport does.

A well-formed ``tools/call`` is answered directly instead of through ``serve_one``: the SDK's own
validators still decide whether its params are well-formed, but the per-request kernel around the
handler (a connection with its exit stack, the session and context objects, a no-op
OpenTelemetry span, the result's model -> dict -> surface model -> dict round trip) is skipped.
That kernel cost ~0.4 ms of server CPU per call, a tenth of the whole loopback round trip.
Anything else, and every call while a tracer provider or another middleware is installed, goes
through the kernel; tests/api/test_direct_tool_call.py holds both paths to byte-identical answers.

The SDK's ASGI app is deliberately not mounted: hosted inside aiohttp its SSE paths wedge the
event loop (see platform.md). The kernel functions used here are exported but not covered by the
SDK's guides, which is why ``mcp`` is pinned exactly and both eras are tested end to end.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version as distribution_version
from typing import Any, Final, NamedTuple

import anyio
import mcp_types as types
from aiohttp import web
from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.runner import modern_error_data, serve_one
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import methods as sdk_methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from multidict import MultiMapping
from opentelemetry import trace
from pydantic import ValidationError

from services.api.headers import tool_context_of
from services.api.tools.spec import ToolResult, ToolSpec
from shared.errors import InvalidInputError

logger = logging.getLogger(__name__)

SERVER_NAME: Final = "mcp-memory"
DISTRIBUTION: Final = "mcp-memory"
MAX_BODY_BYTES: Final = 4 * 1024 * 1024

_JSON: Final = "application/json"
_PROTOCOL_VERSION_META_KEY: Final = types.PROTOCOL_VERSION_META_KEY
_TOOLS_CALL: Final = "tools/call"


def server_version() -> str:
    """The installed distribution's version: pyproject is the one place it is written."""
    return distribution_version(DISTRIBUTION)


@dataclass
class _SingleExchange:
    """The SDK's ``DispatchContext`` for one HTTP exchange that has no back-channel.

    One JSON body answers the request, so there is nowhere to put a server-initiated request or
    a notification: requests refuse, notifications and progress are dropped.
    """

    transport: TransportContext
    request_id: types.RequestId
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        opts: CallOptions | None = None,
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


def _json_response(body: Mapping[str, Any], *, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(),
        status=status,
        content_type=_JSON,
    )


def jsonrpc_error(
    code: int, message: str, *, status: int, request_id: types.RequestId | None = None
) -> web.Response:
    """A JSON-RPC error body; ``id`` stays on the wire as null when the request's is unknown."""
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return _json_response(error, status=status)


def _error_response(
    error: types.ErrorData, *, request_id: types.RequestId, modern: bool
) -> web.Response:
    # The modern era maps JSON-RPC codes to HTTP statuses (the SDK's table); in the handshake era
    # the SDK's own transport answers a handler's JSON-RPC error with 200, and so do we.
    status = ERROR_CODE_HTTP_STATUS.get(error.code, 200) if modern else 200
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": error.model_dump(mode="json", by_alias=True, exclude_none=True),
    }
    return _json_response(body, status=status)


def _is_modern(request: web.Request, method: str, params: Mapping[str, Any] | None) -> bool:
    """Which era serves this request: ``initialize`` is always the handshake era."""
    if method == "initialize":
        return False
    meta = (params or {}).get("_meta")
    if isinstance(meta, Mapping) and _PROTOCOL_VERSION_META_KEY in meta:
        return True
    header = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    # An unknown revision goes to the modern ladder, which names what is supported.
    return header is not None and header not in HANDSHAKE_PROTOCOL_VERSIONS


class _Route(NamedTuple):
    """The revision that serves a request, and the client's envelope (modern era only)."""

    protocol_version: str
    client_info: Any = None
    client_capabilities: Any = None


def _text_result(text: str, *, is_error: bool) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=is_error
    )


def _tool_call_wire_result(
    result: ToolResult, *, protocol_version: str, server: Server[Any]
) -> dict[str, Any]:
    """What the kernel's ``_serialize`` makes of ``_text_result(...)``, key order included: the
    2026-07-28 revision adds ``resultType`` and the server's ``_meta`` stamp."""
    wire: dict[str, Any] = {
        "content": [{"text": result.text, "type": "text"}],
        "isError": result.is_error,
    }
    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        wire["resultType"] = "complete"
        wire["_meta"] = {types.SERVER_INFO_META_KEY: server.server_info_stamp}
    return wire


class McpEndpoint:
    """The ``POST /mcp`` handler over a catalogue fixed for the process's lifetime."""

    def __init__(self, catalogue: Sequence[ToolSpec], *, version: str) -> None:
        self._specs = {spec.name: spec for spec in catalogue}
        self._tools = [
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
            for spec in catalogue
        ]
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=version,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        request = ctx.request
        if not isinstance(request, web.Request):
            raise TypeError("the MCP endpoint passes the aiohttp request to every handler")
        result = await self._run_tool(request.headers, params.name, params.arguments)
        return _text_result(result.text, is_error=result.is_error)

    async def _run_tool(
        self, headers: MultiMapping[str], name: str, arguments: dict[str, Any] | None
    ) -> ToolResult:
        """One tool call, whichever path it came by; only a handler's own bug raises."""
        spec = self._specs.get(name)
        if spec is None:
            return ToolResult(text=f'Error: unknown tool "{name}".', is_error=True)
        try:
            # Resolved when a tool runs, never at the handshake: discovery needs no tenant.
            tool_context = tool_context_of(headers)
        except InvalidInputError as refusal:
            logger.info("tool_refused", extra={"tool": spec.name, "header": refusal.field})
            return ToolResult(text=f"Error: {refusal}", is_error=True)
        return await spec.handler(tool_context, arguments or {})

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one POST: a JSON-RPC result or error, 202 for a notification."""
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return jsonrpc_error(
                types.INVALID_REQUEST,
                f"request body exceeds the {MAX_BODY_BYTES} byte (4 MiB) limit",
                status=413,
            )
        try:
            decoded = json.loads(raw)
        except (ValueError, RecursionError):
            # ValueError covers bad UTF-8 and oversized integer literals as well as bad JSON.
            return jsonrpc_error(
                types.PARSE_ERROR, "Parse error: body is not valid JSON", status=400
            )
        if isinstance(decoded, dict) and "id" not in decoded:
            return self._acknowledge(decoded)
        try:
            message = types.JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return jsonrpc_error(
                types.INVALID_REQUEST,
                "body must be a single JSON-RPC request or notification object",
                status=400,
            )
        return await self._serve(request, decoded, message)

    @staticmethod
    def _acknowledge(decoded: dict[str, Any]) -> web.Response:
        # Nothing on this stateless endpoint can act on a client notification (initialized,
        # cancelled): accept and drop it, as the SDK's transports do.
        try:
            types.JSONRPCNotification.model_validate(decoded)
        except ValidationError:
            return jsonrpc_error(
                types.INVALID_REQUEST,
                "body must be a single JSON-RPC request or notification object",
                status=400,
            )
        return web.Response(status=202)

    async def _serve(
        self, request: web.Request, decoded: dict[str, Any], message: types.JSONRPCRequest
    ) -> web.Response:
        modern = _is_modern(request, message.method, message.params)
        route = _modern_route(request, decoded) if modern else _legacy_route(request)
        if isinstance(route, InboundLadderRejection):
            return _error_response(
                types.ErrorData(code=route.code, message=route.message, data=route.data),
                request_id=message.id,
                modern=True,
            )
        if message.method == _TOOLS_CALL and self._kernel_adds_nothing():
            answered = await self._serve_tool_call(request, message, route, modern=modern)
            if answered is not None:
                return answered
        return await self._serve_by_kernel(request, message, route, modern=modern)

    async def _serve_by_kernel(
        self, request: web.Request, message: types.JSONRPCRequest, route: _Route, *, modern: bool
    ) -> web.Response:
        connection = Connection.from_envelope(*route)
        exchange = _SingleExchange(
            transport=TransportContext(
                kind="streamable-http", can_send_request=False, headers=request.headers
            ),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request),
        )
        try:
            result = await serve_one(
                self.server,
                exchange,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=None,
            )
        except Exception as exc:  # noqa: BLE001 — the wire boundary: an error body, never a 500
            return _error_response(modern_error_data(exc), request_id=message.id, modern=modern)
        return _json_response({"jsonrpc": "2.0", "id": message.id, "result": result})

    def _kernel_adds_nothing(self) -> bool:
        """Whether skipping the kernel loses nothing: its only middleware is the OpenTelemetry
        span, and no tracer provider is configured, so that span would record nothing.

        Asked per request, so a provider or middleware installed after start-up still counts.
        """
        middleware = self.server.middleware
        return (
            len(middleware) == 1
            and isinstance(middleware[0], OpenTelemetryMiddleware)
            and isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        )

    async def _serve_tool_call(
        self, request: web.Request, message: types.JSONRPCRequest, route: _Route, *, modern: bool
    ) -> web.Response | None:
        """A ``tools/call`` answered as the kernel would, or None to leave it to the kernel.

        The kernel's own validators run first, in its order; params they refuse go to the
        kernel, which refuses them again with the exact error it has always answered.
        """
        version = route.protocol_version
        try:
            sdk_methods.validate_client_request(_TOOLS_CALL, version, message.params)
            params = types.CallToolRequestParams.model_validate(
                {} if message.params is None else message.params, by_name=False
            )
        except (KeyError, ValueError):  # ValueError covers pydantic's ValidationError
            return None
        try:
            result = await self._run_tool(request.headers, params.name, params.arguments)
        except Exception as exc:  # noqa: BLE001 — the wire boundary, as in _serve_by_kernel
            return _error_response(modern_error_data(exc), request_id=message.id, modern=modern)
        wire = _tool_call_wire_result(result, protocol_version=version, server=self.server)
        return _json_response({"jsonrpc": "2.0", "id": message.id, "result": wire})


def _modern_route(request: web.Request, decoded: dict[str, Any]) -> _Route | InboundLadderRejection:
    duplicated = find_duplicated_routing_header(request.headers.items())
    if duplicated is not None:
        return InboundLadderRejection(
            code=types.HEADER_MISMATCH, message=f"{duplicated} header appears more than once"
        )
    headers = {name.lower(): value for name, value in request.headers.items()}
    verdict = classify_inbound_request(decoded, headers=headers)
    if isinstance(verdict, InboundLadderRejection):
        return verdict
    return _Route(verdict.protocol_version, verdict.client_info, verdict.client_capabilities)


def _legacy_route(request: web.Request) -> _Route:
    # Stateless handshake era: each request gets a born-ready connection at the version the
    # client's header names, or the spec's default when it names none (before initialize).
    header = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if header is None or header not in HANDSHAKE_PROTOCOL_VERSIONS:
        header = types.DEFAULT_NEGOTIATED_VERSION
    return _Route(header)


__all__ = ["MAX_BODY_BYTES", "SERVER_NAME", "McpEndpoint", "jsonrpc_error", "server_version"]
