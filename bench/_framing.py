"""The server's MCP framing of one tools/call, timed alone: ``POST /mcp``'s handler
(``services.api.http.mcp_transport.McpEndpoint``) over a catalogue whose one tool answers at once
with a result already built, so what is timed is the JSON-RPC parse, the SDK's validation and
dispatch, and the result's serialisation, for the real size of a recall's answer. No socket, no
HTTP parsing, no client: those are what recall over HTTP adds on top."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import streams
from aiohttp.base_protocol import BaseProtocol
from aiohttp.test_utils import make_mocked_request

from services.api.http.mcp_transport import McpEndpoint
from services.api.tools.definition import ToolContext, ToolResult, ToolSpec

TENANT_HEADER: Final = "X-Memory-Tenant"
# What the official client sends on a tools/call (its modern-era envelope).
_META: Final = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Framing:
    """One endpoint whose ``recall`` answers with whatever ``answer`` was last given."""

    def __init__(self, output_schema: dict[str, Any]) -> None:
        self._result = ToolResult(text="")

        async def handler(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
            return self._result

        spec = ToolSpec(
            name="recall",
            description="recall",
            input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
            handler=handler,
            output_schema=output_schema,
        )
        self._endpoint = McpEndpoint([spec], version="bench")

    async def timed(self, query: str, result: ToolResult) -> float:
        """Seconds the endpoint takes to answer a tools/call of ``query`` with ``result``."""
        self._result = result
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": query}, "_meta": _META},
            }
        ).encode()
        request = make_mocked_request(
            "POST",
            "/mcp",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Content-Length": str(len(body)),
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "recall",
                TENANT_HEADER: "bench",
            },
            payload=_payload(body),
        )
        started = time.perf_counter()
        response = await self._endpoint.handle(request)
        elapsed = time.perf_counter() - started
        if response.status != 200:
            raise RuntimeError(f"the framing bench's call answered {response.status}")
        return elapsed


def _payload(body: bytes) -> streams.StreamReader:
    loop = asyncio.get_running_loop()
    reader = streams.StreamReader(BaseProtocol(loop), 2**16, loop=loop)
    reader.feed_data(body)
    reader.feed_eof()
    return reader


__all__ = ["Framing"]
