"""Command-line flags both processes share: the embedded-database pair and a port flag."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_local_arguments(parser: argparse.ArgumentParser, *, local_help: str) -> None:
    """``--local`` and ``--data-dir DIR``: the embedded PostgreSQL (see shared/config.py)."""
    parser.add_argument("--local", action="store_true", help=local_help)
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where --local keeps its database"
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
