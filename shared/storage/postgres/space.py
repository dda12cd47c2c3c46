"""Whether the database can still write: a full disk is named as such, to the caller and to the
readiness probe, rather than read as an outage (PostgreSQL answers a write it has no space for
with SQLSTATE 53100, and goes on serving reads).

``SpaceWatch`` holds what this process last saw: set when a write is refused for space, cleared
by the next insert or update that succeeds. Beside it, for the embedded database, the free bytes
of the data dir's filesystem: below one WAL segment, the next segment switch cannot happen.
An external server's disk is not visible from here, so there only the last write tells.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from shared.errors import StorageFullError

# One WAL segment: with less free, PostgreSQL cannot start its next one.
MIN_FREE_BYTES: Final = 16 * 1024 * 1024
_WRITES: Final = ("INSERT", "UPDATE")


class SpaceWatch:
    """The last write's verdict on the disk (see the module docstring)."""

    __slots__ = ("full",)

    def __init__(self) -> None:
        # The refusal's message (for the log) while the last write was refused for space.
        self.full: str | None = None

    def wrote(self, sql: str) -> None:
        """A statement succeeded: an insert or an update means there was room for it."""
        if self.full is not None and sql.lstrip()[:6].upper() in _WRITES:
            self.full = None


def space_check(
    watch: SpaceWatch, *, store: str, data_dir: Path | None
) -> Callable[[], Awaitable[None]]:
    """The readiness probe's question: may a write succeed?

    Raises (from the check):
        StorageFullError: the last write was refused for space, or the data dir's filesystem
            has less than ``MIN_FREE_BYTES`` free.
    """

    async def check() -> None:
        if watch.full is not None:
            raise StorageFullError(watch.full, store=store)
        if data_dir is None:
            return
        free = shutil.disk_usage(data_dir).free
        if free < MIN_FREE_BYTES:
            raise StorageFullError(
                f"{store} has no space left on its disk: {free} bytes free for {data_dir}, "
                f"below the {MIN_FREE_BYTES} a WAL segment needs",
                store=store,
            )

    return check
