"""``POST /mcp``: MCP Streamable HTTP over the SDK's framework-independent kernel, statelessly.

Each POST is answered on its own with one ``application/json`` body: no SSE, no session id.
Both protocol eras share the endpoint. A request carrying the 2026-07-28 envelope (or the
protocol-version header naming a modern revision) runs the SDK's validation ladder and is served
per request; anything else — ``initialize`` first of all — is served in the handshake era on a
born-ready connection, as the SDK's own stateless legacy transport does.

The SDK's ASGI app is deliberately not mounted: hosted inside aiohttp its SSE paths wedge the
event loop (see platform.md). The kernel functions used here are exported but not covered by the
SDK's guides, which is why ``mcp`` is pinned exactly and both eras are tested end to end.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp_types as types
from aiohttp import web
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
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from services.api.http.headers import tool_context_of
from services.api.tools.catalogue_server import CatalogueServer
from services.api.tools.definition import ToolContext, ToolSpec

MAX_BODY_BYTES: Final = 4 * 1024 * 1024
# The most a body may take to arrive once its headers have (4 MiB at 0.8 MB/s).
BODY_READ_TIMEOUT_S: Final = 5.0

_JSON: Final = "application/json"
_NOT_ONE_MESSAGE: Final = "body must be a single JSON-RPC request or notification object"
_PROTOCOL_VERSION_META_KEY: Final = types.PROTOCOL_VERSION_META_KEY


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


def _context_of_request(ctx: ServerRequestContext[Any]) -> ToolContext:
    request = ctx.request
    if not isinstance(request, web.Request):
        raise TypeError("the MCP endpoint passes the aiohttp request to every handler")
    return tool_context_of(request.headers)


class McpEndpoint:
    """The ``POST /mcp`` handler over a catalogue fixed for the process's lifetime."""

    def __init__(self, catalogue: Sequence[ToolSpec], *, version: str) -> None:
        self.server = CatalogueServer(
            catalogue, version=version, context_of=_context_of_request
        ).server

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one POST: a JSON-RPC result or error, 202 for a notification."""
        try:
            async with asyncio.timeout(BODY_READ_TIMEOUT_S):
                raw = await request.read()
        except TimeoutError:
            # Without a deadline, a Content-Length larger than what arrives holds the handler
            # forever.
            return jsonrpc_error(
                types.INVALID_REQUEST,
                f"the request body did not arrive within {BODY_READ_TIMEOUT_S:g} s "
                "(is Content-Length larger than the body?)",
                status=408,
            )
        except web.HTTPRequestEntityTooLarge:
            return jsonrpc_error(
                types.INVALID_REQUEST,
                f"request body exceeds the {MAX_BODY_BYTES} byte (4 MiB) limit",
                status=413,
            )
        except web.RequestPayloadError:
            # aiohttp decodes Content-Encoding while the body is read; a body that is not what
            # the header says fails here, and is the caller's parse error, not a 500.
            encoding = request.headers.get("Content-Encoding", "")
            return jsonrpc_error(
                types.PARSE_ERROR,
                f"Parse error: the body is not valid {encoding} as its Content-Encoding says; "
                "send it compressed that way, or without the header",
                status=400,
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
            return jsonrpc_error(types.INVALID_REQUEST, _NOT_ONE_MESSAGE, status=400)
        return await self._serve(request, decoded, message)

    @staticmethod
    def _acknowledge(decoded: dict[str, Any]) -> web.Response:
        # Nothing on this stateless endpoint can act on a client notification (initialized,
        # cancelled): accept and drop it, as the SDK's transports do.
        try:
            types.JSONRPCNotification.model_validate(decoded)
        except ValidationError:
            return jsonrpc_error(types.INVALID_REQUEST, _NOT_ONE_MESSAGE, status=400)
        return web.Response(status=202)

    async def _serve(
        self, request: web.Request, decoded: dict[str, Any], message: types.JSONRPCRequest
    ) -> web.Response:
        modern = _is_modern(request, message.method, message.params)
        connection_or_rejection = (
            self._modern_connection(request, decoded)
            if modern
            else self._legacy_connection(request)
        )
        if isinstance(connection_or_rejection, InboundLadderRejection):
            rejection = connection_or_rejection
            return _error_response(
                types.ErrorData(
                    code=rejection.code, message=rejection.message, data=rejection.data
                ),
                request_id=message.id,
                modern=True,
            )
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
                connection=connection_or_rejection,
                lifespan_state=None,
            )
        except Exception as exc:  # noqa: BLE001 — the wire boundary: an error body, never a 500
            return _error_response(modern_error_data(exc), request_id=message.id, modern=modern)
        return _json_response({"jsonrpc": "2.0", "id": message.id, "result": result})

    @staticmethod
    def _modern_connection(
        request: web.Request, decoded: dict[str, Any]
    ) -> Connection | InboundLadderRejection:
        duplicated = find_duplicated_routing_header(request.headers.items())
        if duplicated is not None:
            return InboundLadderRejection(
                code=types.HEADER_MISMATCH, message=f"{duplicated} header appears more than once"
            )
        headers = {name.lower(): value for name, value in request.headers.items()}
        verdict = classify_inbound_request(decoded, headers=headers)
        if isinstance(verdict, InboundLadderRejection):
            return verdict
        return Connection.from_envelope(
            verdict.protocol_version, verdict.client_info, verdict.client_capabilities
        )

    @staticmethod
    def _legacy_connection(request: web.Request) -> Connection:
        # Stateless handshake era: each request gets a born-ready connection at the version the
        # client's header names, or the spec's default when it names none (before initialize).
        header = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        if header is None or header not in HANDSHAKE_PROTOCOL_VERSIONS:
            header = types.DEFAULT_NEGOTIATED_VERSION
        return Connection.from_envelope(header, None, None)
