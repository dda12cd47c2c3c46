"""What every compactor job is given, and what every run of one counts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec

from services.compactor.metrics import CompactorMetrics
from shared.counters import COMPACTION_LAG_MS
from shared.memories.expiry import Expirer
from shared.memories.reconcile import Reconciler
from shared.storage import ObjectStore


class JobRun(msgspec.Struct, frozen=True, kw_only=True):
    """What every job's run returns: the tenants it went over and how many failed (the runner
    times the run). Each job's result adds its own figures, its own metrics and its own fields
    of the ``compactor_job`` log line."""

    tenants: int = 0
    tenants_failed: int = 0

    def record(self, metrics: CompactorMetrics) -> None:
        raise NotImplementedError

    def log_fields(self) -> dict[str, int]:
        raise NotImplementedError


class JobContext(msgspec.Struct, frozen=True, kw_only=True):
    """The state store, a clock in milliseconds, the lag shards must be older than, the
    backend's own housekeeping the gc job runs (``Stores.housekeeping``; None: nothing to keep
    up), and the repairers the reconcile and expiry jobs drive (None: that job has nothing to
    run on)."""

    objects: ObjectStore
    clock_ms: Callable[[], int]
    lag_ms: int = COMPACTION_LAG_MS
    housekeeping: Callable[[], Awaitable[int]] | None = None
    reconciler: Reconciler | None = None
    expirer: Expirer | None = None
