"""The catalogue: each tool module wrapped in the one guard that logs, counts, bounds and maps
errors.

Every tool call leaves one ``tool_call`` line on stdout (tenant, tool, ms, ok, inConversation);
a failure that reaches a tool also leaves ``tool_failed`` on stderr, with the error's own
message (which may name a bucket or an endpoint: that is what an operator needs). Neither carries
content, a query, tags or a conversation id. The caller reads only which store failed and what
to do (``services.api.failures``). A refusal of the caller's arguments is the model's mistake and
is answered, not logged as a failure.

A call runs under ``TOOL_TIMEOUT_S``; each storage call in it under ``STORAGE_TIMEOUT_S``
(``services.api.deadlines``). Either running out is answered as a tool error and counted in
``mcp_memory_tool_timeouts_total`` by tool and stage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from services.api import metrics
from services.api.answers import Reply
from services.api.failures import RETRY_LATER, caller_text, tool_timeout_text
from services.api.tools.spec import ToolContext, ToolResult, ToolSpec
from shared.errors import DocsError, InvalidInputError, StorageTimeoutError

logger = logging.getLogger(__name__)

Handle = Callable[[ToolContext, Mapping[str, Any]], Awaitable[Reply]]

STORE_FAILURE: Final = "the memory store could not complete this request"
DOCS_FAILURE: Final = "the documentation index could not be searched"


def _refuse_unknown_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    known = schema.get("properties", {})
    for name in arguments:
        if name not in known:
            hint = (
                " (the tenant and conversation come from the connection, never from arguments:"
                " request headers over HTTP, the server's environment over stdio)"
                if name.lower() in {"tenant", "tenantid", "tenant_id", "conversation"}
                else ""
            )
            allowed = ", ".join(known) or "none"
            raise InvalidInputError(
                name, f"unknown argument `{name}`; this tool takes: {allowed}{hint}"
            )


def _refuse_unstorable_characters(arguments: Mapping[str, Any], prefix: str = "") -> None:
    """A NUL or a lone surrogate in any string argument (in any entry of a list of them, or in
    any field of an object such as forget's ``filter``, named ``filter.category``) is refused by
    the field's name before anything is sent: PostgreSQL rejects both with a driver error, and a
    surrogate cannot even be encoded for S3 or the embedder."""
    for name, value in arguments.items():
        field = f"{prefix}{name}"
        if isinstance(value, Mapping):
            _refuse_unstorable_characters(value, prefix=f"{field}.")
            continue
        for text in value if isinstance(value, list) else (value,):
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                raise InvalidInputError(field, f"`{field}` contains a NUL character (U+0000)")
            surrogate = next((ch for ch in text if "\ud800" <= ch <= "\udfff"), None)
            if surrogate is not None:
                raise InvalidInputError(
                    field,
                    f"`{field}` contains a lone surrogate (U+{ord(surrogate):04X}), which is not "
                    "a character: send valid UTF-8",
                )


async def _failure(name: str, ctx: ToolContext, error: Exception) -> ToolResult:
    # exc_info puts the error's message and class on the line (never a traceback).
    logger.error("tool_failed", exc_info=error, extra={"tenant": ctx.tenant, "tool": name})
    if isinstance(error, StorageTimeoutError):
        metrics.TOOL_TIMEOUTS.labels(tool=name, stage=error.operation).inc()
    if isinstance(error, DocsError):
        return ToolResult(text=f"Error: {DOCS_FAILURE}; {RETRY_LATER}", is_error=True)
    # An unexpected bug too: the model gets a plain sentence, never a traceback.
    return ToolResult(text=f"Error: {STORE_FAILURE} — {caller_text(error)}", is_error=True)


def _out_of_time(name: str, ctx: ToolContext, timeout_s: float) -> ToolResult:
    logger.error(
        "tool_failed",
        extra={"tenant": ctx.tenant, "tool": name, "reason": "timeout", "timeout_s": timeout_s},
    )
    metrics.TOOL_TIMEOUTS.labels(tool=name, stage="tool").inc()
    return ToolResult(
        text=f"Error: {STORE_FAILURE} — {tool_timeout_text(timeout_s)}", is_error=True
    )


def guarded(
    *,
    name: str,
    description: str,
    schema: dict[str, Any],
    handle: Handle,
    output_schema: dict[str, Any] | None = None,
    timeout_s: float | None = None,
) -> ToolSpec:
    """A ToolSpec whose handler never raises: every outcome is a ToolResult.

    Args:
        timeout_s: the whole call's deadline (TOOL_TIMEOUT_S); None sets none (benchmarks).
    """

    async def handler(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        started = time.perf_counter()
        outcome = "ok"
        deadline = asyncio.timeout(timeout_s)
        try:
            _refuse_unknown_arguments(schema, arguments)
            _refuse_unstorable_characters(arguments)
            async with deadline:
                reply = await handle(ctx, arguments)
            result = ToolResult(text=reply.text, structured=reply.data)
        except InvalidInputError as error:
            outcome = "invalid"
            result = ToolResult(text=f"Error: {error}", is_error=True)
        except Exception as error:
            outcome = "failed"
            if isinstance(error, TimeoutError) and deadline.expired() and timeout_s is not None:
                result = _out_of_time(name, ctx, timeout_s)
            else:
                result = await _failure(name, ctx, error)
        elapsed_s = time.perf_counter() - started
        metrics.TOOL_CALLS.labels(tool=name, outcome=outcome).inc()
        metrics.TOOL_SECONDS.labels(tool=name).observe(elapsed_s)
        logger.info(
            "tool_call",
            extra={
                "tenant": ctx.tenant,
                "tool": name,
                "ms": round(elapsed_s * 1000),
                "ok": outcome == "ok",
                "inConversation": ctx.conversation is not None,
            },
        )
        return result

    return ToolSpec(
        name=name,
        description=description,
        input_schema=schema,
        handler=handler,
        output_schema=output_schema,
    )
