"""Whether the embedded server runs, and a watch that stops a ``--local`` process once it
has died (its postmaster is another process, and nothing signals this one when it dies)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

from shared.storage.postgres.embedded import pgdata_path

logger = logging.getLogger(__name__)


def server_alive(data_dir: Path) -> bool:
    """Whether the embedded server's postmaster (as its ``postmaster.pid`` names it) runs."""
    try:
        first_line = (pgdata_path(data_dir) / "postmaster.pid").read_text().split("\n", 1)[0]
        os.kill(int(first_line), 0)
    except (OSError, ValueError):
        return False
    return True


async def watch_server(data_dir: Path, *, interval_s: float = 1.0) -> None:
    """Return once the embedded server in ``data_dir`` has stopped running (checked every
    ``interval_s``). A process serving ``--local`` then exits non-zero rather than answering
    every call with "connection refused": what supervises it restarts it, and the restart
    starts the server again."""
    # Polled: the postmaster is another process, and nothing signals this one when it dies.
    # It is first waited for, since a process may start watching before its boot started it.
    seen = False
    while True:
        alive = await asyncio.to_thread(server_alive, data_dir)
        if seen and not alive:
            break
        seen = seen or alive
        await asyncio.sleep(interval_s)
    logger.error("embedded_postgres_died", extra={"data_dir": str(data_dir)})


def stop_when_dead(data_dir: Path, stop: asyncio.Event) -> asyncio.Task[None]:
    """A task that sets ``stop`` once the embedded server has died (see ``watch_server``); a
    process that finds it done exits 1. Both ``--local`` processes run one."""

    async def watch() -> None:
        await watch_server(data_dir)
        stop.set()

    return asyncio.get_running_loop().create_task(watch())


def died(watcher: asyncio.Task[None] | None) -> bool:
    """Whether ``watcher`` (from ``stop_when_dead``) saw the server die; stops it otherwise."""
    if watcher is None:
        return False
    if not watcher.done():
        watcher.cancel()
        return False
    return not watcher.cancelled()
