"""A small real catalogue and runtime for the HTTP layer's tests, until the memory tools land.

``echo`` reports the context it was given, so a test can read which tenant and conversation the
transport resolved; ``fail`` answers with ``is_error``; ``slow`` sleeps, for the lifecycle tests.
``catalogue_runtime`` satisfies the ``open_runtime`` contract of ``services.api.runtime``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec

from services.api.tools.definition import ToolContext, ToolResult, ToolSpec
from shared.config import Config


async def _always_ready() -> None:
    """The readiness check of a runtime with no storage."""


class CatalogueRuntime(msgspec.Struct, frozen=True, kw_only=True):
    catalogue: tuple[ToolSpec, ...]
    boot_lines: tuple[str, ...] = ("store: test catalogue (no storage)",)
    check_ready: Callable[[], Awaitable[None]] = _always_ready
    operations: None = None
    objects: None = None


async def _echo(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    payload = {"tenant": ctx.tenant, "conversation": ctx.conversation, "arguments": arguments}
    return ToolResult(text=json.dumps(payload, sort_keys=True))


async def _fail(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    return ToolResult(text="Error: this tool always refuses", is_error=True)


async def _slow(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
    seconds = float(arguments.get("seconds", 1.0))
    await asyncio.sleep(seconds)
    return ToolResult(text=f"slept {seconds}")


ECHO = ToolSpec(
    name="echo",
    description="Answers with the tenant, conversation and arguments it was called with.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    handler=_echo,
)
FAIL = ToolSpec(
    name="fail",
    description="Always answers with a tool error.",
    input_schema={"type": "object", "properties": {}},
    handler=_fail,
)
SLOW = ToolSpec(
    name="slow",
    description="Sleeps for `seconds`, then answers.",
    input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    handler=_slow,
)
TEST_CATALOGUE: tuple[ToolSpec, ...] = (ECHO, FAIL, SLOW)

RuntimeFactory = Callable[[Config], AbstractAsyncContextManager[Any]]


def catalogue_runtime(catalogue: tuple[ToolSpec, ...] = TEST_CATALOGUE) -> RuntimeFactory:
    """An ``open_runtime`` that serves ``catalogue`` and opens nothing."""

    @contextlib.asynccontextmanager
    async def open_runtime(config: Config) -> AsyncIterator[CatalogueRuntime]:
        yield CatalogueRuntime(catalogue=catalogue)

    return open_runtime
