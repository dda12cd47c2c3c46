"""``mcp-memory-api``: validate, open the runtime, listen, and shut down gracefully.

Order matters. Configuration is validated, then the runtime opens (stores, schema, embedder,
counters), and only then is the port bound, so a broken deployment stops at the probe rather
than inside somebody's agent run. On SIGTERM or SIGINT the listener closes, in-flight calls get
up to ``IN_FLIGHT_GRACE_S`` to finish, and then the runtime exits, which runs the final counter
flush. Further signals are logged and ignored: a second Ctrl-C must not cost the flush.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import msgspec

from shared.config import Config, load_config
from shared.errors import BootError, ConfigError, ServiceError, StorageError
from shared.process.allocator import tune_allocator
from shared.process.cli import (
    add_local_arguments,
    add_port_argument,
    add_version_argument,
    host_type,
    stop_on_signals,
)
from shared.process.listen import is_unspecified, url_host
from shared.process.logs import configure_logging, start_announced, text_wanted
from shared.process.ports import port_in_use_text, taken_on
from shared.process.version import installed_version
from shared.storage.data_dir import DATA_DIR_EXIT_CODE, DataDirError, check_data_dir
from shared.storage.factory import start_early, watch_embedded_server

if TYPE_CHECKING:
    from aiohttp import web

    from services.api.http.app import RuntimeOpener
    from services.api.http.connections import ConnectionGuard

logger = logging.getLogger(__name__)

# In-flight calls get this long after the listener closes; the final flush follows, so the whole
# shutdown stays inside the 10 s the deployment grants unless the flush itself is slow.
IN_FLIGHT_GRACE_S: Final = 8.0
SHUTDOWN_GRACE_S: Final = 10.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-memory-api", description="Long-term memory for AI agents over MCP."
    )
    add_version_argument(parser)
    add_local_arguments(
        parser,
        local_help="use the embedded PostgreSQL and the local model (no AWS, no database server)",
    )
    add_port_argument(parser, "--port", what="listen", variable="PORT")
    parser.add_argument(
        "--host",
        type=host_type("--host"),
        default=None,
        help="listen on these addresses instead of HOST: an IP address or a comma-separated "
        "list of them (default: 127.0.0.1 under --local, so only this machine can connect; "
        "0.0.0.0,:: otherwise, every interface, as a pod needs)",
    )
    add_port_argument(parser, "--ui-port", what="serve the memory page (/ui)", variable="UI_PORT")
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="serve one client over stdin/stdout instead of HTTP (desktop and IDE clients); "
        "the tenant comes from MCP_MEMORY_TENANT",
    )
    return parser


def _log_boot(*, runner: web.AppRunner, app: web.Application, config: Config) -> None:
    from services.api.announce import bound_port, open_auth_notice
    from services.api.http.app import RUNTIME_KEY
    from services.api.tools.catalogue_server import SERVER_NAME

    port = bound_port(runner.addresses, default=config.server.port)
    logger.info(
        "listening",
        extra={
            "server": SERVER_NAME,
            "version": installed_version(),
            "port": port,
            "addresses": [f"{url_host(host)}:{bound}" for host, bound, *_ in runner.addresses],
            "endpoint": _endpoint(runner.addresses, port=port),
        },
    )
    for line in app[RUNTIME_KEY].boot_lines:
        logger.info("boot", extra={"detail": line})
    if config.server.mcp_api_key is not None:
        logger.info(
            "auth",
            extra={"mode": "bearer", "detail": "every /mcp request must present MCP_API_KEY"},
        )
    else:
        level, detail = open_auth_notice(config, port=port)
        logger.log(level, "auth", extra={"mode": "open", "detail": detail})


def _endpoint(addresses: list[Any], *, port: int) -> str:
    """The URL to give a client: the address itself when the process listens on specific ones
    (loopback under --local), a placeholder when any interface will do."""
    if not addresses or any(is_unspecified(host) for host, *_ in addresses):
        return f"POST http://<host>:{port}/mcp"
    host, bound, *_ = addresses[0]
    return f"POST http://{url_host(host)}:{bound}/mcp"


def _freeze_boot_objects() -> int:
    """Move everything alive after boot out of the garbage collector's sight; how many objects.

    The SDK, pydantic, onnxruntime and numpy leave ~120,000 tracked objects behind at import, and
    every full collection would walk them all with the event loop stopped, stalling every call
    in flight (docs/benchmarks.md). They live as long as the process, so they are collected once
    here and then frozen; a full collection then walks only what came later. Snapshot rows are
    not tracked at all (see ``SnapshotRow``).
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


async def _start(
    runner: web.AppRunner, *, hosts: tuple[str, ...], port: int, guard: ConnectionGuard
) -> None:
    """Open the runtime (in ``setup``) and bind the port, refusing by name if either fails."""
    try:
        await runner.setup()
    except StorageError as error:
        raise BootError(f"storage error: {error}") from error
    except ConfigError as error:
        raise BootError(f"configuration error: {error}") from error
    except ServiceError as error:
        raise BootError(f"startup error: {error}") from error
    from services.api.http.connections import GuardedSite

    site = GuardedSite(runner, guard, hosts=hosts, port=port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        if error.errno == errno.EADDRINUSE:  # taken since serve() checked it
            text = port_in_use_text(", ".join(hosts), port, variable="PORT", flag="--port")
            raise BootError(text) from error
        where = ", ".join(hosts)
        raise BootError(f"startup error: cannot listen on {where} port {port}: {error}") from error


async def serve(
    config: Config, *, open_runtime: RuntimeOpener | None = None, banner: bool = False
) -> int:
    """Run until a signal, then shut down gracefully; the process's exit code. ``banner``: say
    where to connect on stderr once both listeners are up (``announce``)."""
    if _port_taken(config):
        return 1
    if open_runtime is None:
        start_early(config)
    # Imported here, not at the top: the MCP SDK takes seconds to import, and a configuration
    # refusal should not wait for it; nor does a stdio server need the web stack at all.
    from aiohttp import web

    from services.api.http.app import RUNTIME_KEY, build_app
    from services.api.http.connections import KEEPALIVE_TIMEOUT_S, ConnectionGuard
    from services.api.http.throttle import KeyThrottle
    from services.api.runtime import open_runtime as real_runtime
    from services.api.ui import start_ui

    stop = asyncio.Event()
    stop_on_signals(stop)
    guard = ConnectionGuard()
    # One count of wrong keys per process: a guesser gains nothing by alternating /mcp and /ui.
    throttle = KeyThrottle(trusted_proxies=config.server.trusted_proxies)
    app = build_app(
        config, open_runtime=open_runtime or real_runtime, guard=guard, throttle=throttle
    )
    runner = web.AppRunner(
        app,
        shutdown_timeout=IN_FLIGHT_GRACE_S,
        access_log=None,
        keepalive_timeout=KEEPALIVE_TIMEOUT_S,
    )
    try:
        await _start(runner, hosts=config.server.hosts, port=config.server.port, guard=guard)
    except BootError as error:
        print(error, file=sys.stderr)
        return 1
    logger.info("boot_objects_frozen", extra={"objects": _freeze_boot_objects()})
    _log_boot(runner=runner, app=app, config=config)
    # The memory page, on its own port; its runner stops first, while the runtime still runs.
    runtime = app[RUNTIME_KEY]
    ui = await start_ui(config, runtime.operations, runtime.objects, throttle)
    _announce(app, runner=runner, ui=ui, config=config, banner=banner)
    embedded_died = watch_embedded_server(config, stop)
    await stop.wait()
    server_died = embedded_died()
    started = time.monotonic()
    if ui is not None:
        await ui.cleanup()
    # Stop listening, let in-flight calls finish, then exit the runtime (the final flush).
    await runner.cleanup()
    logger.info("shutdown_complete", extra={"ms": round((time.monotonic() - started) * 1000)})
    # Exiting 1 after the embedded server died lets what supervises --local restart it all.
    return 1 if server_died else 0


def _port_taken(config: Config) -> bool:
    """Whether another server holds the port, said on stderr: checked before the runtime opens
    (seconds), so that such a start is refused at once."""
    busy = taken_on(config.server.hosts, config.server.port)
    if busy is None:
        return False
    print(
        port_in_use_text(busy, config.server.port, variable="PORT", flag="--port"),
        file=sys.stderr,
    )
    return True


def _announce(
    app: web.Application,
    *,
    runner: web.AppRunner,
    ui: web.AppRunner | None,
    config: Config,
    banner: bool,
) -> None:
    """Tell ``GET /`` where the page listens; print the banner and let the text log's info
    lines flow, when there is one."""
    from services.api.announce import banner_lines, bound_port, page_text, print_banner
    from services.api.http.app import RUNTIME_KEY
    from services.api.http.pointer import POINTER_KEY

    if ui is not None:
        app[POINTER_KEY].port = bound_port(ui.addresses, default=config.server.ui_port)
    if not banner:
        return
    runtime = app[RUNTIME_KEY]
    page = page_text(
        config,
        addresses=ui.addresses if ui is not None else None,
        has_page=runtime.operations is not None,
    )
    lines = banner_lines(
        config,
        version=installed_version(),
        mcp_addresses=runner.addresses,
        page=page,
        boot_lines=runtime.boot_lines,
    )
    print_banner(lines)
    start_announced()


def run(argv: Sequence[str] | None = None, *, open_runtime: RuntimeOpener | None = None) -> int:
    """Parse flags, validate the environment and serve; the exit code."""
    args = _parser().parse_args(argv)
    configure_logging(stdout_is_protocol=args.stdio)
    try:
        config = load_config(os.environ, local=args.local, data_dir=args.data_dir)
        # A person at a terminal gets a banner and text lines; stdio's stdout is the protocol.
        text = not args.stdio and text_wanted(config.server.log_format, sys.stderr)
        if text:
            configure_logging(text=True)
        tune_allocator(os.environ)
        if args.local:
            check_data_dir(args.data_dir)
        if args.stdio:
            return _run_stdio(config, open_runtime=open_runtime)
    except DataDirError as error:
        print(error, file=sys.stderr)
        return DATA_DIR_EXIT_CODE
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 1
    config = _with_flags(config, args)
    return asyncio.run(serve(config, open_runtime=open_runtime, banner=text))


def _with_flags(config: Config, args: argparse.Namespace) -> Config:
    """The listening flags given override their variables (PORT, HOST, UI_PORT)."""
    flags = {"port": args.port, "hosts": args.host, "ui_port": args.ui_port}
    given = {name: value for name, value in flags.items() if value is not None}
    return msgspec.structs.replace(config, server=msgspec.structs.replace(config.server, **given))


def _run_stdio(config: Config, *, open_runtime: RuntimeOpener | None) -> int:
    """Raises ConfigError: MCP_MEMORY_TENANT is missing or malformed (before anything opens)."""
    from services.api.stdio.relay import relayed
    from services.api.stdio.sharing import shares_a_resident, with_stdio_grace

    config = with_stdio_grace(config)
    # A test's own runtime is served in this process, never by a resident.
    if open_runtime is None and shares_a_resident(config):
        code = relayed(config)
        if code is not None:
            return code
    if open_runtime is None:
        # The database comes up while this process imports the MCP SDK (most of a second).
        start_early(config)
    from services.api.runtime import open_runtime as real_runtime
    from services.api.stdio.transport import serve_stdio, stdio_context

    context = stdio_context(config.stdio)
    try:
        return asyncio.run(serve_stdio(config, context, open_runtime=open_runtime or real_runtime))
    except (StorageError, ServiceError) as error:
        print(f"startup error: {error}", file=sys.stderr)
        return 1


def main() -> None:
    """The ``mcp-memory-api`` console script."""
    sys.exit(run())
