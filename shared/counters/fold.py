"""The pure arithmetic of the counters: merging deltas and folding shards into merged.json.

Nothing here awaits, reads a clock or touches storage. Callers in
:mod:`shared.counters.compaction` and :mod:`shared.counters.tracker` do the I/O, and
:mod:`shared.storage.shardlog` chooses which shards a fold absorbs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from shared.model.counters import AccessCount, MergedCounters
from shared.storage.shardlog import fresh_names

Counts = Mapping[str, AccessCount]


def combine(left: AccessCount | None, right: AccessCount) -> AccessCount:
    """One memory's counts from two parts: accesses add, ``lastAt`` takes the later.

    ISO-8601 UTC strings with milliseconds compare as times, so the later is the larger string.
    """
    if left is None:
        return right
    return AccessCount(
        access=left.access + right.access,
        last_at=max(left.last_at, right.last_at),
    )


def merge(*parts: Counts) -> dict[str, AccessCount]:
    """Sum count maps. Commutative and associative, so parts may arrive in any order."""
    total: dict[str, AccessCount] = {}
    for part in parts:
        for memory_id, count in part.items():
            total[memory_id] = combine(total.get(memory_id), count)
    return total


class SummedCounts(Mapping[str, AccessCount]):
    """Several count maps read as their ``merge``, combined one key at a time on lookup.

    A recall looks up about a hundred memories, while a tenant's durable counts can cover
    thousands: building the merged dict on every recall would cost more than the ranking it
    feeds, while the query is being embedded, taking CPU from the model. The parts are held, not
    copied, so callers pass maps nobody changes afterwards.
    """

    __slots__ = ("_parts",)

    def __init__(self, *parts: Counts) -> None:
        self._parts = tuple(part for part in parts if part)

    def __getitem__(self, memory_id: str) -> AccessCount:
        total = self.get(memory_id)
        if total is None:
            raise KeyError(memory_id)
        return total

    def get(self, memory_id: str, default: AccessCount | None = None) -> AccessCount | None:  # type: ignore[override]
        # Without a KeyError per miss (Mapping.get's way): most memories were never accessed.
        total: AccessCount | None = None
        for part in self._parts:
            count = part.get(memory_id)
            if count is not None:
                total = combine(total, count)
        return default if total is None else total

    def __iter__(self) -> Iterator[str]:
        if len(self._parts) == 1:
            return iter(self._parts[0])
        return iter(dict.fromkeys(key for part in self._parts for key in part))

    def __len__(self) -> int:
        if len(self._parts) == 1:
            return len(self._parts[0])
        return len(set().union(*self._parts))


def total_counts(merged: MergedCounters, shards: Mapping[str, Counts]) -> dict[str, AccessCount]:
    """What a reader reports: merged counts plus every shard above the watermark."""
    fresh = fresh_names(shards, watermark=merged.watermark)
    return merge(merged.counts, *(shards[name] for name in fresh))


def absorb(
    merged: MergedCounters, shards: Mapping[str, Counts], names: Sequence[str]
) -> MergedCounters:
    """``merged`` plus the shards ``names`` (ascending), the watermark at the last of them; a
    name without a body (gone, or unreadable) moves the watermark all the same."""
    counts = merge(merged.counts, *(shards[name] for name in names if name in shards))
    return MergedCounters(counts=counts, watermark=names[-1])
