"""Reading one tenant's counter objects: merged.json, the shard listing, and shard bodies."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

import msgspec

from shared.counters.codec import decode_merged, decode_shard
from shared.model.counters import AccessCount, MergedCounters
from shared.model.keys import STATS_ROOT
from shared.storage.interfaces import ObjectStore, StoredObject
from shared.storage.shardlog import ShardLayout

logger = logging.getLogger(__name__)

# The counters' shard log: stats/<tenant>/shard/<ulid>-<processId>.json and merged.json.
COUNTER_LAYOUT: Final = ShardLayout(STATS_ROOT)


class MergedRead(msgspec.Struct, frozen=True, kw_only=True):
    """merged.json as read, with the etag a compare-and-swap must name (None: no object yet)."""

    merged: MergedCounters
    etag: str | None


class TenantCounters(msgspec.Struct, frozen=True, kw_only=True):
    """One consistent-enough read: merged.json first, then every shard above its watermark."""

    merged: MergedCounters
    etag: str | None
    shards: dict[str, dict[str, AccessCount]]


def merged_of(stored: StoredObject | None, tenant: str) -> MergedRead:
    """Absent: empty, no etag. Unreadable: empty, but the etag is kept so a fold can replace it."""
    if stored is None:
        return MergedRead(merged=MergedCounters(), etag=None)
    merged = decode_merged(stored.body)
    if merged is None:
        logger.warning("stats_merged_unreadable", extra={"tenant": tenant})
        merged = MergedCounters()
    return MergedRead(merged=merged, etag=stored.etag)


async def read_merged(objects: ObjectStore, tenant: str) -> MergedRead:
    return merged_of(await objects.get(COUNTER_LAYOUT.merged_key(tenant)), tenant)


async def read_shards(
    objects: ObjectStore, tenant: str, names: Sequence[str]
) -> dict[str, dict[str, AccessCount]]:
    """Shard bodies by name; shards gone meanwhile are omitted. An unreadable one is kept as
    an empty shard: it counts for nothing, but a fold still absorbs and removes it."""
    shards: dict[str, dict[str, AccessCount]] = {}
    for name, body in (await COUNTER_LAYOUT.bodies(objects, tenant, names)).items():
        deltas = decode_shard(body)
        if deltas is None:
            logger.warning("stats_shard_unreadable", extra={"tenant": tenant, "shard": name})
        shards[name] = deltas or {}
    return shards


class MergedCache:
    """The last decoded merged.json per tenant, bounded by the memories they count in total
    (a tenant's counts are what costs memory, not the tenant), least recently used dropped.

    A read checks the etag alone and reuses the decoded counts while it is unchanged: merged.json
    changes only when a fold lands, while a cold counter read happens every cache window per
    tenant and process (at 10,000 counted memories the body is ~0.5 MB to move and decode).
    """

    def __init__(self, *, max_entries: int) -> None:
        self._max_entries = max_entries
        self._held: OrderedDict[str, MergedRead] = OrderedDict()
        self._entries = 0

    @property
    def entries(self) -> int:
        return self._entries

    async def read(self, objects: ObjectStore, tenant: str) -> MergedRead:
        cached = self._held.get(tenant)
        if cached is not None and cached.etag is not None:
            if await objects.etag(COUNTER_LAYOUT.merged_key(tenant)) == cached.etag:
                self._held.move_to_end(tenant)
                return cached
        fresh = await read_merged(objects, tenant)
        self._keep(tenant, fresh)
        return fresh

    def _keep(self, tenant: str, read: MergedRead) -> None:
        dropped = self._held.pop(tenant, None)
        if dropped is not None:
            self._entries -= len(dropped.merged.counts)
        size = len(read.merged.counts)
        if read.etag is None or size > self._max_entries:
            return
        self._held[tenant] = read
        self._entries += size
        while self._entries > self._max_entries:
            _, oldest = self._held.popitem(last=False)
            self._entries -= len(oldest.merged.counts)


async def read_tenant(
    objects: ObjectStore,
    tenant: str,
    *,
    attempts: int = 3,
    merged_cache: MergedCache | None = None,
) -> TenantCounters:
    """merged.json, then the shards above its watermark, then merged.json's etag once more.

    A fold landing between the first read and the listing moves the watermark and deletes the
    shards it absorbed, so this read would see them in neither place. The second look at the etag
    catches that and reads again; after ``attempts`` the last read stands (an undercount that the
    next re-read corrects — never an overcount, and never durable). With ``merged_cache``, an
    unchanged merged.json is taken from it after one etag check instead of being read again.
    """
    while True:
        attempts -= 1
        current = await (
            merged_cache.read(objects, tenant)
            if merged_cache is not None
            else read_merged(objects, tenant)
        )
        names = await COUNTER_LAYOUT.names(objects, tenant, after=current.merged.watermark)
        shards = await read_shards(objects, tenant, names)
        if attempts <= 0 or await _etag(objects, tenant) == current.etag:
            return TenantCounters(merged=current.merged, etag=current.etag, shards=shards)


async def _etag(objects: ObjectStore, tenant: str) -> str | None:
    # The etag alone: re-reading the body would cost a second transfer of merged.json on every
    # cold counter read.
    return await objects.etag(COUNTER_LAYOUT.merged_key(tenant))
