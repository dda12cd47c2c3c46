"""The counters as a shard log (``shared.storage.shardlog``): what their merged.json and shards mean
to a fold, and adding counts that come from outside the store (an import).

Folds run in the API (on demand, off the request path) and in the compactor. Any number may run
at once: the compare-and-swap on merged.json lets exactly one fold win per version, and the
watermark keeps an absorbed shard from being counted again even when it is never deleted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from shared.counters.codec import decode_shard, encode_merged
from shared.counters.fold import absorb, merge
from shared.counters.reader import COUNTER_LAYOUT, merged_of, read_merged
from shared.errors import ConflictError
from shared.model.counters import AccessCount, MergedCounters
from shared.storage.interfaces import ObjectStore, StoredObject
from shared.storage.shardlog import ShardLayout, ShardLog


class CounterFolding:
    """merged.json is every memory's counts; a shard is one flush of deltas to add."""

    layout: ShardLayout = COUNTER_LAYOUT
    name: str = "stats"

    def start(self, stored: StoredObject | None, tenant: str) -> MergedCounters:
        # An absent or unreadable merged.json is folded into from empty (the etag, if any, is
        # kept by the log, so the fold replaces the unreadable object).
        return merged_of(stored, tenant).merged

    def watermark(self, merged: MergedCounters) -> str:
        return merged.watermark

    def absorb(
        self, merged: MergedCounters, bodies: Mapping[str, str], names: Sequence[str]
    ) -> MergedCounters:
        shards = {name: decode_shard(body) or {} for name, body in bodies.items()}
        return absorb(merged, shards, names)

    def encode(self, merged: MergedCounters) -> str:
        return encode_merged(merged)


COUNTER_LOG: Final = ShardLog(CounterFolding())


async def add_to_merged(
    objects: ObjectStore, tenant: str, counts: Mapping[str, AccessCount], *, attempts: int = 8
) -> None:
    """Fold counts that come from outside this store (an import) into merged.json, by the same
    compare-and-swap a fold uses; the watermark is kept, as no shard was absorbed.

    Raises:
        ConflictError: every attempt lost the compare-and-swap to another writer.
        StorageError: reading or writing merged.json failed (nothing was changed).
    """
    for _ in range(attempts):
        current = await read_merged(objects, tenant)
        merged = MergedCounters(
            counts=merge(current.merged.counts, counts), watermark=current.merged.watermark
        )
        try:
            await objects.put(
                COUNTER_LAYOUT.merged_key(tenant),
                encode_merged(merged),
                if_match=current.etag,
                if_none_match=current.etag is None,
            )
            return
        except ConflictError:
            continue  # a fold won meanwhile: read it again and add to what it wrote
    raise ConflictError(f"merged counters of {tenant!r} kept changing; the counts were not added")
