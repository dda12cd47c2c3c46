"""FlushLoop: push a tracker's pending counts every interval, and once more on the way out."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from shared.counters.tracker import CounterTracker

logger = logging.getLogger(__name__)


class FlushLoop:
    """Async context manager owning the periodic flush of one CounterTracker.

    On exit the loop stops and a final flush runs under :func:`asyncio.shield`, so a shutdown that
    cancels the caller still gets this process's last counts written.
    """

    def __init__(self, tracker: CounterTracker, *, interval_ms: int) -> None:
        if interval_ms <= 0:
            raise ValueError(f"interval_ms must be positive, got {interval_ms}")
        self._tracker = tracker
        self._interval_s = interval_ms / 1000
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FlushLoop:
        if self._task is not None:
            raise RuntimeError("FlushLoop is already running")
        self._task = asyncio.create_task(self._run(), name="stats-flush-loop")
        return self

    async def __aexit__(self, *_: object) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.shield(self._final())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            await self._tracker.flush()

    async def _final(self) -> None:
        await self._tracker.flush(final=True)
        await self._tracker.settled()
