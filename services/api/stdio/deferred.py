"""The stdio server's tools before its runtime is open: listed at once, run once it is.

A desktop client gives a server about ten seconds to answer ``initialize`` and ``tools/list``,
and opening the runtime (the embedded PostgreSQL, the schema, the model) takes most of that on a
slow machine. The listing needs none of it: names, descriptions and schemas are constants of the
tool definitions, and whether ``search_docs`` is offered is fixed by the configuration. So the
runtime opens in a task of its own while the transport already answers, and a tool call waits
for it. If it cannot open, the process prints the one-line reason on stderr (the client's log),
and every call is answered with where to find it: a storage error may name a database URL,
which is the operator's to read, not the model's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from services.api.tools import ToolDefinition, offered_tools
from services.api.tools.definition import ToolContext, ToolResult, ToolSpec
from shared.errors import ConfigError, InvariantError, ServiceError

if TYPE_CHECKING:
    from services.api.http.app import RuntimeOpener, RuntimeView
    from shared.config import Config

logger = logging.getLogger(__name__)


def startup_error_line(error: BaseException) -> str:
    """The one line a failed boot is reported as on stderr (the HTTP boot's wording)."""
    if isinstance(error, ConfigError):
        return f"configuration error: {error}"
    if isinstance(error, ServiceError):
        return f"startup error: {error}"
    # A bug, not a refusal: its class is what an operator searches for.
    return f"startup error: {type(error).__name__}: {error}"


def startup_error_answer(error: BaseException) -> str:
    """What a tool call is answered when the runtime could not open."""
    if isinstance(error, ConfigError):
        # Names a variable and its rule, never a secret: the fix, said where it is needed.
        return f"Error: the memory server could not start — configuration error: {error}"
    return (
        "Error: the memory server could not open its storage or model; the reason is on its "
        "stderr, in your MCP client's log for this server"
    )


class BackgroundRuntime:
    """The runtime, entered and left by one task of its own (an async context manager must be
    left by the task that entered it), which ``start()`` starts.

    ``ready()`` waits for it; ``close()`` leaves it, which runs the final counter flush. A client
    that leaves while it is still opening gives the process 0.5 s (Claude Code) to 2 s (the MCP
    SDKs) before a SIGKILL, too few to finish opening first: the opening is cancelled instead,
    and each step unwinds what it opened. The embedded PostgreSQL is held by a keeper process
    that stops it even if this one is killed while it starts (``embedded_database``), so none
    is left running with nobody to stop it.
    """

    def __init__(
        self,
        config: Config,
        open_runtime: RuntimeOpener,
        *,
        on_open: Callable[[RuntimeView], None],
        on_failure: Callable[[str], None],
    ) -> None:
        # The runtime, or what every tool call is answered when it could not open.
        self._opened: asyncio.Future[RuntimeView | str] = asyncio.get_running_loop().create_future()
        self._leave = asyncio.Event()
        self._failed = False
        self._config = config
        self._open_runtime = open_runtime
        self._on_open = on_open
        self._on_failure = on_failure
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._hold())

    async def _hold(self) -> None:
        entered = False
        try:
            async with self._open_runtime(self._config) as runtime:
                entered = True
                self._opened.set_result(runtime)
                self._on_open(runtime)
                await self._leave.wait()
        except Exception as error:
            if entered:
                raise  # the way out failed: close() reports it as it always was
            # Any failure to open, a bug included, is answered to every tool call rather than
            # left to hang them; its line is what the process prints.
            self._failed = True
            logger.error("startup_failed", exc_info=error)
            if not self._opened.done():  # close() answers for a cancelled opening
                self._opened.set_result(startup_error_answer(error))
            self._on_failure(startup_error_line(error))

    async def ready(self) -> RuntimeView | str:
        """The open runtime, or what a tool call is answered when it could not open."""
        # Shielded: a call cancelled while it waits must not cancel the future others wait on.
        return await asyncio.shield(self._opened)

    @property
    def failed(self) -> bool:
        return self._failed

    async def close(self) -> None:
        self._leave.set()
        if self._task is None:
            return
        if not self._opened.done():
            self._task.cancel()
            # Nobody is left to call a tool, but a call still waiting gets an answer.
            self._opened.set_result("Error: the memory server is shutting down")
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def tool_definitions(config: Config) -> tuple[ToolDefinition[Any, Any], ...]:
    """The tools the runtime will offer, in its order: the memory tools, and ``search_docs``
    when a knowledge base is configured (as ``build_catalogue`` decides from the same fact)."""
    return offered_tools(with_docs=config.aws.knowledge_base_id is not None)


def waiting_catalogue(
    tools: Sequence[ToolDefinition[Any, Any]], runtime: Callable[[], Awaitable[RuntimeView | str]]
) -> tuple[ToolSpec, ...]:
    """Specs listing ``tools`` whose handlers run the runtime's own spec once
    ``runtime()`` has it, or answer with the reason it never opened."""

    def waiting(name: str) -> Callable[[ToolContext, Mapping[str, Any]], Awaitable[ToolResult]]:
        async def handler(ctx: ToolContext, arguments: Mapping[str, Any]) -> ToolResult:
            opened = await runtime()
            if isinstance(opened, str):
                return ToolResult(text=opened, is_error=True)
            spec = next((spec for spec in opened.catalogue if spec.name == name), None)
            if spec is None:
                raise InvariantError(f"{name} was listed but the runtime does not offer it")
            return await spec.handler(ctx, arguments)

        return handler

    return tuple(tool.spec(waiting(tool.name)) for tool in tools)
