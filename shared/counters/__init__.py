"""Lock-free access counters: per-process shards folded into merged.json by compare-and-swap.

Pure arithmetic lives in :mod:`~shared.counters.fold`, wire formats in
:mod:`~shared.counters.codec`, their use of the shard log (``shared.storage.shardlog``) in
:mod:`~shared.counters.compaction`.
"""

from shared.counters.codec import decode_shard, encode_merged, encode_shard
from shared.counters.compaction import COUNTER_LOG
from shared.counters.reader import COUNTER_LAYOUT
from shared.counters.tracker import CounterEvents, CounterTracker, FlushLoop
from shared.storage.shardlog import COMPACTION_LAG_MS

__all__ = [
    "COMPACTION_LAG_MS",
    "COUNTER_LAYOUT",
    "COUNTER_LOG",
    "CounterEvents",
    "CounterTracker",
    "FlushLoop",
    "decode_shard",
    "encode_merged",
    "encode_shard",
]
