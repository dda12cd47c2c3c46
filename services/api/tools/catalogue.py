"""The catalogue: each tool definition wrapped in the one guard that parses its arguments, logs,
counts, bounds and maps errors.

Every tool call leaves one ``tool_call`` line on stdout (tenant, tool, ms, ok, inConversation);
a failure that reaches a tool also leaves ``tool_failed`` on stderr, with the error's own
message (which may name a bucket or an endpoint: that is what an operator needs). Neither carries
content, a query, tags or a conversation id. A refusal of the caller's arguments is the model's
mistake and is answered, not logged as a failure.

The caller reads which store failed and what to do next, nothing more. An error's own message
is for the operator's log line and may name an endpoint, a bucket, a key (which carries the
tenant) or a driver's words; a model has no use for them, and they describe our infrastructure to
whoever reads the conversation. So the caller's sentence is built from the error's class and the
store it names (``StorageError.store``), and only messages written for the caller pass through: a
budget refusal, which names the field to shorten.

A call runs under ``TOOL_TIMEOUT_S``; each storage call in it under ``STORAGE_TIMEOUT_S``
(``services.api.store_deadlines``). Either running out is answered as a tool error and counted
in ``mcp_memory_tool_timeouts_total`` by tool and stage.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import msgspec

from services.api import metrics
from services.api.tools.arguments import ToolArguments
from services.api.tools.definition import ToolContext, ToolDefinition, ToolResult, ToolSpec
from services.api.tools.refusals import parse_arguments
from shared.errors import (
    BudgetError,
    ConflictError,
    DocsError,
    EmbeddingError,
    InvalidInputError,
    StorageError,
    StorageFullError,
    StorageTimeoutError,
    StorageUnavailableError,
)

logger = logging.getLogger(__name__)

Args = TypeVar("Args", bound=ToolArguments)
Backend = TypeVar("Backend")

STORE_FAILURE: Final = "the memory store could not complete this request"
DOCS_FAILURE: Final = "the documentation index could not be searched"
RETRY_LATER: Final = "try again in a minute"
UNKNOWN_STORE: Final = "the store"


def caller_text(error: Exception) -> str:
    """The sentence a caller reads for ``error`` (after "the memory store could not complete
    this request — ")."""
    if isinstance(error, BudgetError):
        return str(error)
    if isinstance(error, StorageError):
        store = error.store or UNKNOWN_STORE
        if isinstance(error, StorageTimeoutError):
            return f"{store} did not answer within {error.timeout_s:g} s; {RETRY_LATER}"
        if isinstance(error, StorageFullError):
            # Not an outage: retrying in a minute does not help, and reading still works.
            return (
                f"{store} has no space left on its disk, so nothing new can be stored until "
                "the operator frees space; recall and reading memories still work"
            )
        if isinstance(error, StorageUnavailableError):
            return f"{store} could not be reached; {RETRY_LATER}"
        return (
            f"{store} could not complete the operation; {RETRY_LATER}, and report it to the "
            "operator if it keeps failing"
        )
    if isinstance(error, ConflictError):
        return "another request changed the same record at the same moment; try again"
    if isinstance(error, EmbeddingError):
        # Worded for the operator who configured the model, and naming no storage; kept so a
        # model mismatch (its dimensions) is visible from the client too.
        return str(error)
    return f"internal error; {RETRY_LATER}, and report it to the operator if it keeps failing"


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
    # The whole call outlived TOOL_TIMEOUT_S (the embedder, or many slow storage calls).
    return ToolResult(
        text=f"Error: {STORE_FAILURE} — the request did not finish within {timeout_s:g} s; "
        f"{RETRY_LATER}",
        is_error=True,
    )


def guarded(
    definition: ToolDefinition[Args, Backend], backend: Backend, *, timeout_s: float | None = None
) -> ToolSpec:
    """``definition`` working on ``backend``, as a ToolSpec whose handler never raises: every
    outcome is a ToolResult.

    Args:
        timeout_s: the whole call's deadline (TOOL_TIMEOUT_S); None sets none (benchmarks).
    """
    name = definition.name

    async def handler(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
        started = time.perf_counter()
        outcome = "ok"
        deadline = asyncio.timeout(timeout_s)
        try:
            parsed = parse_arguments(definition.arguments, arguments)
            async with deadline:
                reply = await definition.handle(backend, ctx, parsed)
            result = ToolResult(text=reply.text, structured=msgspec.to_builtins(reply.data))
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

    return definition.spec(handler)
