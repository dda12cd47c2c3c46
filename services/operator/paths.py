"""The files an operator command names, checked before anything opens.

Opening a store can start the embedded PostgreSQL and the model, seconds of work; a mistyped
path must be refused before all that, in one line naming the flag, not after it as a traceback.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from shared.errors import RefusedError
from shared.transfer.sources import FOLDER_FORMATS


class PathRefusedError(RefusedError):
    """A flag names a file that cannot be used; the message names the flag and the path."""


def _readable_file(flag: str, path: Path) -> None:
    if not path.exists():
        raise PathRefusedError(f"{flag} {path}: no such file")
    if path.is_dir():
        raise PathRefusedError(f"{flag} {path}: is a directory, not a file")
    if not os.access(path, os.R_OK):
        raise PathRefusedError(f"{flag} {path}: not readable by this user")


def _readable_folder(flag: str, path: Path) -> None:
    if not path.is_dir():
        raise PathRefusedError(f"{flag} {path}: not a folder (basic-memory's notes are one)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise PathRefusedError(f"{flag} {path}: not readable by this user")


def _writable_file(flag: str, path: Path) -> None:
    folder = path.parent
    if not folder.is_dir():
        raise PathRefusedError(f"{flag} {path}: the directory {folder} does not exist")
    if path.is_dir():
        raise PathRefusedError(f"{flag} {path}: is a directory, not a file")
    target = path if path.exists() else folder
    if not os.access(target, os.W_OK):
        raise PathRefusedError(f"{flag} {path}: {target} is not writable by this user")


def check_paths(args: argparse.Namespace) -> None:
    """Raises PathRefusedError for the first flag whose file cannot be used."""
    if args.command == "export" and args.output is not None:
        _writable_file("--output", args.output)
    if args.command == "import" and args.input is not None:
        folder = getattr(args, "source", None) in FOLDER_FORMATS
        (_readable_folder if folder else _readable_file)("--input", args.input)
    if args.command in {"migrate", "reembed"}:
        for side in ("from", "to"):
            env_file: Path | None = getattr(args, f"{side}_env")
            if env_file is not None:
                _readable_file(f"--{side}-env", env_file)
