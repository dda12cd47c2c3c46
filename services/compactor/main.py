"""``mcp-memory-compactor``: fold shards, collect garbage and repair half-written memories on a
schedule, and serve /metrics and /health.

Same configuration and storage as the API (``--local`` for the embedded database). One
AsyncExitStack owns every resource: stores, then the metrics server, then the scheduler, torn
down in reverse on SIGTERM or SIGINT, after which the process exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import sys
from collections.abc import Sequence
from functools import partial
from typing import Final

from aiohttp import web
from prometheus_client.aiohttp import make_aiohttp_handler

from services.compactor.jobs import JOBS, JobContext, JobRunner
from services.compactor.metrics import CompactorMetrics
from services.compactor.schedule import build_scheduler
from shared.config import Config, load_config
from shared.errors import BootError, ConfigError, StorageError
from shared.memories.expiry import Expirer
from shared.memories.reconcile import Reconciler
from shared.memories.repair_context import RepairContext
from shared.model import wall_clock_ms
from shared.process.allocator import tune_allocator
from shared.process.cli import (
    add_local_arguments,
    add_port_argument,
    add_version_argument,
    process_id,
    stop_on_signals,
)
from shared.process.listen import ALL_INTERFACES
from shared.process.logs import configure_logging
from shared.process.ports import port_in_use_text, taken_on
from shared.storage import open_stores
from shared.storage.data_dir import DATA_DIR_EXIT_CODE, DataDirError, check_data_dir
from shared.storage.factory import watch_embedded_server

logger = logging.getLogger(__name__)

JOB_DRAIN_GRACE_S: Final = 8.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-memory-compactor",
        description=(
            "Fold mcp-memory's counter and lexicon shards, delete what folds left behind,"
            " repair memories a crash left half-written and delete expired ones, on a"
            " schedule."
        ),
    )
    add_version_argument(parser)
    add_local_arguments(parser, local_help="use the embedded PostgreSQL (as the API's --local)")
    add_port_argument(
        parser, "--metrics-port", what="serve /metrics and /health", variable="METRICS_PORT"
    )
    return parser


async def _health(_request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _serve_metrics(
    stack: contextlib.AsyncExitStack, metrics: CompactorMetrics, *, port: int
) -> int:
    app = web.Application()
    app.router.add_get("/metrics", make_aiohttp_handler(metrics.registry))
    app.router.add_get("/health", _health)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    stack.push_async_callback(runner.cleanup)
    try:
        await web.TCPSite(runner, port=port).start()
    except OSError as error:
        if error.errno == errno.EADDRINUSE:  # taken since serve() checked it
            text = port_in_use_text("*", port, variable="METRICS_PORT", flag="--metrics-port")
            raise BootError(text) from error
        raise BootError(f"startup error: cannot listen on port {port}: {error}") from error
    # With port 0 each listening socket (IPv4, IPv6) gets its own port: report the IPv4 one.
    ipv4 = [address for address in runner.addresses if len(address) == 2]
    addresses = ipv4 or runner.addresses
    return int(addresses[0][1]) if addresses else port


async def _run(config: Config, *, metrics_port: int, stop: asyncio.Event) -> None:
    async with contextlib.AsyncExitStack() as stack:
        try:
            stores = await stack.enter_async_context(open_stores(config))
        except StorageError as error:
            raise BootError(f"storage error: {error}") from error
        metrics = CompactorMetrics()
        port = await _serve_metrics(stack, metrics, port=metrics_port)
        context = RepairContext(
            vectors=stores.vectors,
            objects=stores.objects,
            process_id=process_id(),
            clock_ms=wall_clock_ms,
        )
        runner = JobRunner(
            JobContext(
                objects=stores.objects,
                clock_ms=wall_clock_ms,
                housekeeping=stores.housekeeping,
                reconciler=Reconciler(context),
                expirer=Expirer(context),
            ),
            metrics,
        )
        scheduler = build_scheduler(
            [(job.schedule_id, partial(runner.run, job), job.interval_s(config)) for job in JOBS]
        )
        scheduler.start()

        async def stop_scheduler() -> None:
            # No new runs, then let the current ones finish; a run still going after the grace
            # is cancelled, which is safe (compare-and-swap) and simply redone by the next start.
            scheduler.pause()
            await runner.drain(timeout_s=JOB_DRAIN_GRACE_S)
            scheduler.shutdown(wait=False)

        stack.push_async_callback(stop_scheduler)
        logger.info(
            "listening",
            extra={
                "server": "mcp-memory-compactor",
                "metricsPort": port,
                "store": stores.description,
                **{f"{job.name}IntervalS": job.interval_s(config) for job in JOBS},
            },
        )
        await stop.wait()
    logger.info("shutdown_complete")


async def serve(config: Config, *, metrics_port: int | None = None) -> int:
    """Run until SIGTERM/SIGINT; the process's exit code."""
    port = config.compactor.metrics_port if metrics_port is None else metrics_port
    # Before the stores open: /metrics listens on every interface, as aiohttp's default does.
    busy = taken_on(ALL_INTERFACES, port)
    if busy is not None:
        print(
            port_in_use_text(busy, port, variable="METRICS_PORT", flag="--metrics-port"),
            file=sys.stderr,
        )
        return 1
    stop = asyncio.Event()
    stop_on_signals(stop)
    embedded_died = watch_embedded_server(config, stop)
    try:
        await _run(config, metrics_port=port, stop=stop)
    except BootError as error:
        embedded_died()
        print(error, file=sys.stderr)
        return 1
    # Exiting 1 after the embedded server died lets what supervises --local restart it all.
    return 1 if embedded_died() else 0


def run(argv: Sequence[str] | None = None) -> int:
    """Parse flags, validate the environment and serve; the exit code."""
    args = _parser().parse_args(argv)
    configure_logging()
    tune_allocator(os.environ)
    try:
        config = load_config(os.environ, local=args.local, data_dir=args.data_dir)
        if args.local:
            check_data_dir(args.data_dir)
    except DataDirError as error:
        print(error, file=sys.stderr)
        return DATA_DIR_EXIT_CODE
    except ConfigError as error:
        print(f"configuration error: {error}", file=sys.stderr)
        return 1
    return asyncio.run(serve(config, metrics_port=args.metrics_port))


def main() -> None:
    """The ``mcp-memory-compactor`` console script."""
    sys.exit(run())
