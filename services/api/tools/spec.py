"""What a tool is, to the transport: a name, a schema, a description and one async handler.

Tool handlers never see HTTP: the transport resolves the tenant and conversation from headers
when a tool runs and hands them over in :class:`ToolContext`. That is what keeps "tenant never
from a tool argument" true by construction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec


class ToolContext(msgspec.Struct, frozen=True, kw_only=True):
    """Who is asking: the tenant (required) and the conversation (optional), from headers."""

    tenant: str
    conversation: str | None = None
    # What puts a call in a conversation on this transport, for a refusal that needs one to say:
    # a header over HTTP; over stdio, which has no headers, the server's environment.
    conversation_via: str = "an X-Conversation-Id header on the request"


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    """The text the model reads, whether it reports a failure, and the same facts as JSON for
    clients that parse them (``structuredContent``; None on a failure)."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


ToolHandler = Callable[[ToolContext, Mapping[str, Any]], Awaitable[ToolResult]]


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of the catalogue, fixed for the process's lifetime."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    output_schema: dict[str, Any] | None = None
