"""What every compactor job is given."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shared.counters import COMPACTION_LAG_MS
from shared.storage import ObjectStore


class JobContext(msgspec.Struct, frozen=True, kw_only=True):
    """The state store, a clock in milliseconds, and the lag shards must be older than."""

    objects: ObjectStore
    clock_ms: Callable[[], int]
    lag_ms: int = COMPACTION_LAG_MS
