"""The timetable: jobs start at once, repeat, and never overlap themselves."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from services.compactor.schedule import build_scheduler


async def test_jobs_start_at_once_repeat_and_never_overlap() -> None:
    running = {"fold": 0, "gc": 0, "reconcile": 0, "expire": 0}
    most = {"fold": 0, "gc": 0, "reconcile": 0, "expire": 0}
    runs = {"fold": 0, "gc": 0, "reconcile": 0, "expire": 0}

    def job(name: str, duration_s: float) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            running[name] += 1
            most[name] = max(most[name], running[name])
            runs[name] += 1
            await asyncio.sleep(duration_s)
            running[name] -= 1

        return run

    scheduler = build_scheduler(
        [
            ("fold_shards", job("fold", 0.25), 0.05),
            ("gc_shards", job("gc", 0.0), 0.1),
            ("reconcile_stores", job("reconcile", 0.0), 0.2),
            ("expire_memories", job("expire", 0.0), 0.1),
        ]
    )
    scheduler.start()
    try:
        await asyncio.sleep(0.8)
    finally:
        scheduler.shutdown(wait=False)
    assert most == {"fold": 1, "gc": 1, "reconcile": 1, "expire": 1}
    assert 2 <= runs["fold"] <= 4  # a 0.25 s job on a 0.05 s interval: overlapping runs skipped
    assert runs["gc"] >= 5
    assert runs["reconcile"] >= 3
    assert runs["expire"] >= 5
