"""``mcp-memory-api --stdio``: the same tools over MCP's stdio transport, for the desktop and IDE
clients that start a server as a child process (Claude Desktop, Claude Code, Cursor, VS Code).

stdout carries the protocol alone; every log line goes to stderr. There are no headers on stdio,
so the tenant comes from the operator's configuration, ``MCP_MEMORY_TENANT``, and a conversation
may come from ``MCP_MEMORY_CONVERSATION``; both by the headers' rules, never from a tool argument.
The handshake and ``tools/list`` are answered at once and the runtime opens behind them; a tool
call waits for it. The process serves one client until its stdin closes or a signal arrives, then
leaves the runtime, which runs the final counter flush. Several such processes (one per editor
window) may share one embedded data dir: they are processes on one PostgreSQL, as pods are. On
its way out, a server leaves a resident behind for the data dir, which serves the next ones
(``services.api.stdio.sharing``).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, TextIO

import anyio
from mcp.server.stdio import stdio_server

from services.api.http.headers import validated_conversation, validated_tenant
from services.api.stdio.deferred import BackgroundRuntime, tool_definitions, waiting_catalogue
from services.api.stdio.sharing import shares_a_resident, start_resident
from services.api.stdio.wire import ScreenedStdin, claimed_stdin
from services.api.tools.catalogue_server import SERVER_NAME, CatalogueServer
from services.api.tools.definition import ToolContext, ToolSpec
from shared.errors import ConfigError, InvalidInputError
from shared.process.version import installed_version
from shared.storage.factory import watch_embedded_server

if TYPE_CHECKING:
    from services.api.http.app import RuntimeOpener, RuntimeView
    from shared.config import Config, StdioSettings

logger = logging.getLogger(__name__)

TENANT_VARIABLE: Final = "MCP_MEMORY_TENANT"
CONVERSATION_VARIABLE: Final = "MCP_MEMORY_CONVERSATION"
# How a stdio server is put in a conversation, as a refusal that needs one says it.
CONVERSATION_VIA: Final = (
    f"{CONVERSATION_VARIABLE} set in this server's environment (the env of its entry in your MCP "
    "client's configuration; stdio has no headers)"
)


def stdio_context(settings: StdioSettings) -> ToolContext:
    """Who every call of this process is from, as the configuration read it at start.

    Raises:
        ConfigError: the tenant is missing or either value breaks the headers' rules.
    """
    tenant, conversation = settings.tenant, settings.conversation
    if tenant is None:
        raise ConfigError(
            f"{TENANT_VARIABLE} is required with --stdio: the tenant comes from the operator's "
            "configuration (the client's env block), never from a tool argument"
        )
    try:
        return ToolContext(
            tenant=validated_tenant(TENANT_VARIABLE, tenant),
            conversation=(
                validated_conversation(CONVERSATION_VARIABLE, conversation)
                if conversation is not None
                else None
            ),
            conversation_via=CONVERSATION_VIA,
            tenant_via=TENANT_VARIABLE,
        )
    except InvalidInputError as error:
        raise ConfigError(str(error)) from error


class StdioEndpoint:
    """The catalogue served to one stdio client, every call as one fixed ToolContext."""

    def __init__(self, catalogue: Sequence[ToolSpec], *, context: ToolContext) -> None:
        self.server = CatalogueServer(
            catalogue, version=installed_version(), context_of=lambda _: context
        ).server

    async def serve(self) -> None:
        """Until the client closes stdin."""
        with claimed_stdin() as wire:
            await self._serve(wire, stdout=None)

    async def serve_socket(self, conn: socket.socket) -> None:
        """Until the relay at the other end of ``conn`` (a blocking socket) closes its side:
        the same session over a Unix socket (services.api.stdio.resident)."""
        with (
            io.TextIOWrapper(conn.makefile("rb"), encoding="utf-8", errors="replace") as wire,
            io.TextIOWrapper(conn.makefile("wb"), encoding="utf-8", write_through=True) as out,
        ):
            await self._serve(wire, stdout=anyio.wrap_file(out))

    async def _serve(self, wire: TextIO, *, stdout: anyio.AsyncFile[str] | None) -> None:
        # Every line the SDK would drop unanswered is answered (services.api.stdio.wire).
        stdin = ScreenedStdin(wire)
        # No stdout given: the SDK claims the process's own.
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            stdin.answer_with(write_stream)
            await self.server.run(
                read_stream, write_stream, self.server.create_initialization_options()
            )


def _log_serving(runtime: RuntimeView, context: ToolContext, *, open_ms: int) -> None:
    """The runtime's boot lines and the line saying whom this process serves, once it is open."""
    for line in runtime.boot_lines:
        logger.info("boot", extra={"detail": line})
    logger.info(
        "serving_stdio",
        extra={
            "server": SERVER_NAME,
            "version": installed_version(),
            "tenant": context.tenant,
            "inConversation": context.conversation is not None,
            "openMs": open_ms,
        },
    )


async def serve_stdio(config: Config, context: ToolContext, *, open_runtime: RuntimeOpener) -> int:
    """Serve one stdio client until it closes stdin (or a signal, or the embedded PostgreSQL's
    death under ``--local``), answering the handshake and ``tools/list`` at once while the
    runtime opens behind them (``services.api.stdio.deferred``); then leave the runtime. The exit
    code: 1 when the database died (the client then starts the server again, which starts the
    database again) or the runtime could not open, else 0."""
    stopping = asyncio.Event()
    embedded_died = watch_embedded_server(config, stopping)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    started = time.monotonic()

    def opened(runtime: RuntimeView) -> None:
        _log_serving(runtime, context, open_ms=round((time.monotonic() - started) * 1000))

    def failed(line: str) -> None:
        # The same line a refused HTTP boot prints; tool calls are answered with it too.
        print(line, file=sys.stderr, flush=True)

    runtime = BackgroundRuntime(config, open_runtime, on_open=opened, on_failure=failed)
    endpoint = StdioEndpoint(
        waiting_catalogue(tool_definitions(config), runtime.ready), context=context
    )
    serving = asyncio.create_task(endpoint.serve())
    # The transport starts first: the runtime's first synchronous steps (imports) then cannot
    # hold back a handshake already on its way.
    await asyncio.sleep(0)
    runtime.start()
    logger.info("stdio_started", extra={"server": SERVER_NAME, "version": installed_version()})
    stop_wait = asyncio.create_task(stopping.wait())
    await asyncio.wait({serving, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
    stop_wait.cancel()
    # Stopped with stdin still open: the SDK reads stdin on a thread that no cancellation
    # interrupts, so the serving task is cancelled but not waited for.
    abandoned = not serving.done()
    if abandoned:
        serving.cancel()
    # Asked before the runtime stops the database itself: the watch would take that for a death.
    server_died = embedded_died()
    # The runtime's exit: the final counter flush, then the stores (or an opening cancelled).
    await runtime.close()
    logger.info("shutdown_complete")
    code = 1 if server_died or runtime.failed else 0
    if code == 0 and shares_a_resident(config) and config.postgres.data_dir is not None:
        # The next stdio server of this data dir is served at once (services.api.stdio.sharing).
        start_resident(config.postgres.data_dir)
    if abandoned:
        # That thread would also hold the interpreter's exit (asyncio joins its executor):
        # everything is flushed and closed, so the process ends here.
        logging.shutdown()
        os._exit(code)
    serving.result()  # a failure of the transport itself is not swallowed
    return code
