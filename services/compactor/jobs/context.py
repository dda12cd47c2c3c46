"""What every compactor job is given."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shared.counters import COMPACTION_LAG_MS
from shared.storage import ObjectStore, VectorStore


class JobContext(msgspec.Struct, frozen=True, kw_only=True):
    """The state store, a clock in milliseconds, the lag shards must be older than, and the
    vector store whose own upkeep the gc job runs (None: nothing to keep up)."""

    objects: ObjectStore
    clock_ms: Callable[[], int]
    lag_ms: int = COMPACTION_LAG_MS
    vectors: VectorStore | None = None
