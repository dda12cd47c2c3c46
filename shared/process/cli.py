"""What the processes share at their edge: ``--version``, the embedded-database flags, port and
host flags, signal handling, the watch on the embedded server under ``--local``, and the
process's identity in the keys it writes."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Final

from shared.process.listen import HOST_RULE, parse_hosts
from shared.process.version import installed_version

logger = logging.getLogger(__name__)

# Where ``--local`` keeps its data unless ``--data-dir`` says otherwise: under the user's home,
# so it follows HOME (shared/storage/data_dir.py checks it before the embedded database starts).
DEFAULT_DATA_DIR: Final = Path.home() / ".local" / "share" / "mcp-memory"


def process_id() -> str:
    """Host name plus a random suffix: unique per process even when pods share a name. What a
    process's shard names end with, so no two processes ever write the same key."""
    host = os.environ.get("HOSTNAME") or socket.gethostname() or "process"
    return f"{host}-{uuid.uuid4().hex[:8]}"


def add_version_argument(parser: argparse.ArgumentParser) -> None:
    """``--version``: print the program's name and release, and exit 0."""
    parser.add_argument(
        "--version", action="version", version=f"{parser.prog} {installed_version()}"
    )


def add_local_arguments(parser: argparse.ArgumentParser, *, local_help: str) -> None:
    """``--local`` and ``--data-dir DIR``: the embedded PostgreSQL (see shared/config.py)."""
    parser.add_argument("--local", action="store_true", help=local_help)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"where --local keeps its database (default: {DEFAULT_DATA_DIR})",
    )


def port_type(flag: str) -> Callable[[str], int]:
    """An argparse type for a port flag; 0 asks the OS for any free port."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            value = -1
        if not 0 <= value < 65536:
            raise argparse.ArgumentTypeError(f"{flag} must be between 0 and 65535, got {raw}")
        return value

    return parse


def add_port_argument(
    parser: argparse.ArgumentParser, flag: str, *, what: str, variable: str
) -> None:
    """A port flag that overrides ``variable`` (None when not given); 0: any free port."""
    parser.add_argument(
        flag,
        type=port_type(flag),
        default=None,
        help=f"{what} here instead of {variable} (0: any free port)",
    )


def host_type(flag: str) -> Callable[[str], tuple[str, ...]]:
    """An argparse type for a listening-address flag, with HOST's syntax (``listen``)."""

    def parse(raw: str) -> tuple[str, ...]:
        try:
            return parse_hosts(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {HOST_RULE}, got {raw}") from None

    return parse


def stop_on_signals(stop: asyncio.Event) -> None:
    """SIGTERM or SIGINT sets ``stop`` once; later ones are logged and ignored, so a second
    Ctrl-C cannot cut the shutdown (and the final counter flush) short."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        name = signal.Signals(signum).name
        if stop.is_set():
            logger.info("shutdown_signal_ignored", extra={"signal": name})
            return
        logger.info("shutdown_started", extra={"signal": name})
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)
