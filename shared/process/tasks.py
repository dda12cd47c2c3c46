"""asyncio work shared or abandoned: one run of a job that several callers wait for, and work
started alongside other work that is no longer wanted."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def shared_run(
    running: dict[str, asyncio.Future[T]], key: str, start: Callable[[], Coroutine[Any, Any, T]]
) -> T:
    """The result of ``start()``, run once for every caller that asks under ``key`` while it
    runs (``running`` holds the run in flight). Shielded: one caller giving up does not cancel
    the run the others wait for."""
    run = running.get(key)
    if run is None:
        run = asyncio.ensure_future(start())
        running[key] = run
        run.add_done_callback(lambda _: running.pop(key, None))
    return await asyncio.shield(run)


def abandon(task: asyncio.Future[Any]) -> None:
    """Stop a task nobody will await, and mark a failure it already had as seen: asyncio would
    otherwise log it as "never retrieved". A task that succeeded is left as it is."""
    if not task.cancel() and not task.cancelled():
        task.exception()
