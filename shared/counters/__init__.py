"""Lock-free access counters: per-process shards folded into merged.json by compare-and-swap.

Pure arithmetic lives in :mod:`~shared.counters.fold`, wire formats in
:mod:`~shared.counters.codec`, their use of the shard log (``shared.shardlog``) in
:mod:`~shared.counters.compaction`.
"""

from shared.counters._reader import COUNTER_LAYOUT
from shared.counters.codec import decode_merged, decode_shard, encode_merged, encode_shard
from shared.counters.compaction import COUNTER_LOG, CounterFolding, add_to_merged
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
from shared.counters.tracker import CounterTracker
from shared.model.ids import wall_clock_ms

__all__ = [
    "COMPACTION_LAG_MS",
    "COUNTER_LAYOUT",
    "COUNTER_LOG",
    "CounterEvents",
    "CounterFolding",
    "CounterTracker",
    "FlushLoop",
    "FoldPlan",
    "NoCounterEvents",
    "absorbable_names",
    "add_to_merged",
    "combine",
    "decode_merged",
    "decode_shard",
    "encode_merged",
    "encode_shard",
    "fold",
    "fresh_names",
    "merge",
    "total_counts",
    "wall_clock_ms",
]
