"""The compactor's jobs, one row each: the name its metrics and log lines carry, the id the
scheduler knows it by, the function that runs it over a ``JobContext``, and the setting that
times it. The runner, the scheduler and the metrics all read this table; adding a job is one
row here and one module beside it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.jobs.expire_memories import expire_memories
from services.compactor.jobs.fold_shards import fold_shards
from services.compactor.jobs.gc_shards import gc_shards
from services.compactor.jobs.reconcile_stores import reconcile_stores
from shared.config import Config


@dataclass(frozen=True)
class Job:
    name: str
    schedule_id: str
    run: Callable[[JobContext], Awaitable[JobRun]]
    interval_s: Callable[[Config], float]


FOLD: Final = Job("fold", "fold_shards", fold_shards, lambda c: c.compactor.fold_interval_s)
GC: Final = Job("gc", "gc_shards", gc_shards, lambda c: c.compactor.gc_interval_s)
RECONCILE: Final = Job(
    "reconcile", "reconcile_stores", reconcile_stores, lambda c: c.compactor.reconcile_interval_s
)
EXPIRE: Final = Job(
    "expire", "expire_memories", expire_memories, lambda c: c.compactor.expire_interval_s
)
JOBS: Final = (FOLD, GC, RECONCILE, EXPIRE)
