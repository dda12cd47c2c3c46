"""The compactor's timetable: the only module that imports APScheduler.

Each job runs at most one instance at a time; runs missed while one was busy are coalesced into
one, and a run late by less than its interval still runs. Correctness never depends on this: jobs
are idempotent, and the API folds on demand without any compactor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

Job = Callable[[], Awaitable[object]]


def build_scheduler(
    *,
    fold: Job,
    gc: Job,
    reconcile: Job,
    expire: Job,
    fold_interval_s: float,
    gc_interval_s: float,
    reconcile_interval_s: float,
    expire_interval_s: float,
) -> AsyncIOScheduler:
    """A scheduler (not started) running each job from now on, each at its own interval."""
    scheduler = AsyncIOScheduler(event_loop=asyncio.get_running_loop(), timezone=UTC)
    now = datetime.now(UTC)
    for job_id, job, interval_s in (
        ("fold_shards", fold, fold_interval_s),
        ("gc_shards", gc, gc_interval_s),
        ("reconcile_stores", reconcile, reconcile_interval_s),
        ("expire_memories", expire, expire_interval_s),
    ):
        scheduler.add_job(
            job,
            "interval",
            seconds=interval_s,
            id=job_id,
            next_run_time=now,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=max(1, round(interval_s)),
        )
    return scheduler
