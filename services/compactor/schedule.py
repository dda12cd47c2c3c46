"""The compactor's timetable: the only module that imports APScheduler.

Each job runs at most one instance at a time; runs missed while one was busy are coalesced into
one, and a run late by less than its interval still runs. Correctness never depends on this: jobs
are idempotent, and the API folds on demand without any compactor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

Run = Callable[[], Awaitable[object]]


def build_scheduler(jobs: Sequence[tuple[str, Run, float]]) -> AsyncIOScheduler:
    """A scheduler (not started) running each (id, run, interval in seconds) from now on."""
    scheduler = AsyncIOScheduler(event_loop=asyncio.get_running_loop(), timezone=UTC)
    now = datetime.now(UTC)
    for job_id, run, interval_s in jobs:
        scheduler.add_job(
            run,
            "interval",
            seconds=interval_s,
            id=job_id,
            next_run_time=now,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=max(1, round(interval_s)),
        )
    return scheduler
