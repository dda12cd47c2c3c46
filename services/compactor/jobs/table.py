"""The compactor's jobs, one row each: the name its metrics and log lines carry, the id the
scheduler knows it by, the function that runs it over a ``JobContext``, and the setting that
times it. The runner, the scheduler and the metrics all read this table; adding a job is one
row here and one module beside it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Protocol

from services.compactor.jobs.context import JobContext
from services.compactor.jobs.expire_memories import expire_memories
from services.compactor.jobs.fold_shards import fold_shards
from services.compactor.jobs.gc_shards import gc_shards
from services.compactor.jobs.reconcile_stores import reconcile_stores
from services.compactor.metrics import CompactorMetrics
from shared.config import Config


class JobResult(Protocol):
    """What every job's run returns: the tenants it went over, how many failed, its time, its
    own metrics and its own fields of the ``compactor_job`` log line."""

    @property
    def tenants(self) -> int: ...

    @property
    def tenants_failed(self) -> int: ...

    @property
    def duration_s(self) -> float: ...

    def record(self, metrics: CompactorMetrics) -> None: ...

    def log_fields(self) -> dict[str, int]: ...


@dataclass(frozen=True)
class Job:
    name: str
    schedule_id: str
    run: Callable[[JobContext], Awaitable[JobResult]]
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

__all__ = ["EXPIRE", "FOLD", "GC", "JOBS", "RECONCILE", "Job", "JobResult"]
