"""Lock-free access counters: per-process shards folded into merged.json by compare-and-swap.

Pure arithmetic lives in :mod:`~shared.counters.fold`, wire formats in
:mod:`~shared.counters.codec`, the storage-facing fold in :mod:`~shared.counters.compaction`.
"""

from shared.counters.codec import decode_merged, decode_shard, encode_merged, encode_shard
from shared.counters.compaction import FoldResult, collect_garbage, fold_tenant
from shared.counters.events import CounterEvents, NoCounterEvents
from shared.counters.flush_loop import FlushLoop
from shared.counters.fold import (
    COMPACTION_LAG_MS,
    FoldPlan,
    absorbable_names,
    combine,
    fold,
    fresh_names,
    merge,
    total_counts,
)
from shared.counters.tracker import CounterTracker, wall_clock_ms

__all__ = [
    "COMPACTION_LAG_MS",
    "CounterEvents",
    "CounterTracker",
    "FlushLoop",
    "FoldPlan",
    "FoldResult",
    "NoCounterEvents",
    "absorbable_names",
    "collect_garbage",
    "combine",
    "decode_merged",
    "decode_shard",
    "encode_merged",
    "encode_shard",
    "fold",
    "fold_tenant",
    "fresh_names",
    "merge",
    "total_counts",
    "wall_clock_ms",
]
