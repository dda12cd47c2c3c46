"""The tool catalogue as an SDK server, for either transport: the list never changes, and each
call runs as the ToolContext the transport resolves for it (from the request's headers over
HTTP, from the operator's configuration over stdio)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from services.api.tools.definition import ToolContext, ToolSpec
from shared.errors import InvalidInputError

logger = logging.getLogger(__name__)

SERVER_NAME = "mcp-memory"

# Who a call is from; raises InvalidInputError naming the header when it cannot say.
ContextOf = Callable[[ServerRequestContext[Any]], ToolContext]


def text_result(
    text: str, *, is_error: bool, structured: dict[str, Any] | None = None
) -> types.CallToolResult:
    """The text first (what a model reads), and the same facts as ``structuredContent``."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


class CatalogueServer:
    """``server``: the SDK server answering tools/list and tools/call over ``catalogue``."""

    def __init__(
        self, catalogue: Sequence[ToolSpec], *, version: str, context_of: ContextOf
    ) -> None:
        self._specs = {spec.name: spec for spec in catalogue}
        self._context_of = context_of
        self._tools = [
            types.Tool(
                name=spec.name,
                description=spec.description,
                input_schema=spec.input_schema,
                output_schema=spec.output_schema,
            )
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
        spec = self._specs.get(params.name)
        if spec is None:
            return text_result(f'Error: unknown tool "{params.name}".', is_error=True)
        try:
            # Resolved when a tool runs, never at the handshake: discovery needs no tenant.
            tool_context = self._context_of(ctx)
        except InvalidInputError as refusal:
            logger.info("tool_refused", extra={"tool": spec.name, "header": refusal.field})
            return text_result(f"Error: {refusal}", is_error=True)
        result = await spec.handler(tool_context, params.arguments or {})
        return text_result(result.text, is_error=result.is_error, structured=result.structured)
