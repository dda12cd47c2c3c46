"""The ``--local`` data dir, checked before the embedded PostgreSQL starts.

A data dir that is a file, or one this user cannot create or write, would otherwise fail deep
inside initdb with an errno and a log path that does not exist. It is refused first, in one
line naming the path, why, and the flag that chooses another (with the default it replaces).
The processes print that line on stderr and exit 2, as argparse does for a bad flag.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Final

from shared.errors import ConfigError
from shared.process.cli import DEFAULT_DATA_DIR

DATA_DIR_EXIT_CODE: Final = 2


class DataDirError(ConfigError):
    """The data dir cannot be used; the message is the one line to print (caught before
    ConfigError, whose refusals exit 1)."""


def _user() -> str:
    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _usable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _blocked(path: Path) -> str | None:
    """The first folder on the way to ``path`` this user may not look into, said plainly."""
    for folder in reversed(path.parents):
        if not os.access(folder, os.X_OK):
            return f"user {_user()} may not look inside {folder}"
    return None


def _problem(path: Path) -> str | None:
    """Why ``path`` cannot be the data dir, or None (it is a writable folder, or one this user
    can make)."""
    if path.is_dir():
        return None if _usable(path) else f"is not writable by user {_user()}"
    if path.is_symlink() and not path.exists():
        return f"is a link to {os.readlink(path)}, which does not exist"
    if path.exists():
        return "is a file, not a folder"
    for ancestor in path.parents:
        if ancestor.is_dir():
            if not _usable(ancestor):
                return f"cannot be created: {ancestor} is not writable by user {_user()}"
            break
        if ancestor.exists():
            return f"cannot be created: {ancestor} is a file, not a folder"
    # Not made here: a refusal that comes later (a port another server holds) leaves nothing
    # behind; the embedded server makes the folder when it starts.
    return None


def check_data_dir(data_dir: Path | None, *, flag: str = "--data-dir") -> Path:
    """The data dir ``--local`` will use (``data_dir`` or the default), once it is known to be
    usable (a writable folder, or one this user can make).

    Raises:
        DataDirError: it is a file, or cannot be created or written by this user.
    """
    path = (data_dir or DEFAULT_DATA_DIR).expanduser().absolute()
    try:
        why = _problem(path)
    except OSError as error:  # a folder on the way cannot be looked into by this user
        why = f"cannot be reached: {_blocked(path) or error.strerror or error}"
    if why is None:
        return path
    if data_dir is None:
        raise DataDirError(
            f"data dir error: {path} (the default, under HOME) {why}; name a folder this user "
            f"can write with {flag} DIR, or set HOME to a folder where it can be made"
        )
    raise DataDirError(
        f"data dir error: {path} (given by {flag}) {why}; name a folder this user can write "
        f"with {flag} DIR, or leave it out for the default, {DEFAULT_DATA_DIR} (under HOME)"
    )
