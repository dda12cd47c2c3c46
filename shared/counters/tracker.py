"""CounterTracker: this process's access counts, its shards, and its view of everyone's.

Recording touches memory only. A flush turns each tenant's pending deltas into one immutable shard
that only this process will ever write. A read sums merged.json and the shards above its
watermark, cached per tenant for ``cache_ttl_ms``; when more than ``compact_threshold`` shards are
old enough to absorb, the read starts a fold in the background rather than on the caller's time.
A cold read of a tenant whose merged.json has not changed since the last one checks its etag and
reuses the decoded counts (``MergedCache``). ``FlushLoop`` flushes on an interval, and once more on
the way out; what happens is told to a ``CounterEvents`` observer (the API's metrics), without
shared/ ever importing prometheus.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Final, Protocol

import msgspec

from shared.counters.codec import encode_shard
from shared.counters.compaction import COUNTER_LOG
from shared.counters.fold import SummedCounts, combine, total_counts
from shared.counters.reader import COUNTER_LAYOUT, MergedCache, read_tenant
from shared.errors import StorageError
from shared.model.counters import AccessCount
from shared.model.ids import iso_ms, new_ulid, wall_clock_ms
from shared.storage.interfaces import ObjectStore
from shared.storage.shardlog import COMPACTION_LAG_MS, absorbable_names, shard_name
from shared.storage.tenant_reads import (
    DEFAULT_CACHE_TTL_MS,
    DEFAULT_MAX_CACHED_TENANTS,
    TenantReads,
)

logger = logging.getLogger(__name__)

# Decoded merged counts kept for the etag check of a cold read (~200 B each: ~40 MB at most).
DEFAULT_MAX_MERGED_ENTRIES: Final = 200_000


class CounterEvents(Protocol):
    """Observer of the counter machinery; the API's metrics implement it."""

    def shard_backlog(self, shards: int) -> None:
        """A reader saw this many shards above the watermark of one tenant."""

    def cas_conflict(self) -> None:
        """A fold lost its compare-and-swap on merged.json; someone else folded first."""

    def flush_failed(self) -> None:
        """A shard write failed; its counts are lost, by design."""

    def fold_seconds(self, seconds: float) -> None:
        """How long one background fold took, successful or not."""


class NoCounterEvents:
    """The default observer: counts nothing."""

    def shard_backlog(self, shards: int) -> None:
        pass

    def cas_conflict(self) -> None:
        pass

    def flush_failed(self) -> None:
        pass

    def fold_seconds(self, seconds: float) -> None:
        pass


class _Durable(msgspec.Struct, frozen=True, kw_only=True):
    """One tenant's durable counts as read, and what that read already includes."""

    counts: dict[str, AccessCount]
    watermark: str
    seen: frozenset[str]


class _OwnShard(msgspec.Struct, frozen=True, kw_only=True):
    """A shard this process wrote (or is writing), kept visible to its own reads until a read
    that started after the write completed has picked it up (``TenantReads``)."""

    name: str
    deltas: dict[str, AccessCount]


class CounterTracker:
    """Lock-free access counters over an ObjectStore (see the module docstring)."""

    def __init__(
        self,
        objects: ObjectStore,
        *,
        process_id: str,
        compact_threshold: int,
        events: CounterEvents | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
        cache_ttl_ms: int = DEFAULT_CACHE_TTL_MS,
        lag_ms: int = COMPACTION_LAG_MS,
        max_cached_tenants: int = DEFAULT_MAX_CACHED_TENANTS,
        max_merged_entries: int = DEFAULT_MAX_MERGED_ENTRIES,
    ) -> None:
        self._objects = objects
        self._process_id = process_id
        self._compact_threshold = compact_threshold
        self._events: CounterEvents = events or NoCounterEvents()
        self._clock_ms = clock_ms
        self._lag_ms = lag_ms
        self._pending: dict[str, dict[str, AccessCount]] = {}
        # One read per tenant at a time, shared by every caller that finds the cache stale:
        # when the TTL ran out under load, each concurrent caller read and decoded the whole
        # tenant (12 reads at each expiry among the soak's 16 clients).
        self._reads: TenantReads[_Durable, _OwnShard] = TenantReads(
            self._read,
            clock_ms=clock_ms,
            ttl_ms=cache_ttl_ms,
            max_tenants=max_cached_tenants,
        )
        self._folds: dict[str, asyncio.Task[None]] = {}
        self._merged = MergedCache(max_entries=max_merged_entries)

    def record(self, tenant: str, memory_id: str, *, at_ms: int) -> None:
        """Count one access in memory; this process's next ``load`` sees it at once."""
        pending = self._pending.setdefault(tenant, {})
        pending[memory_id] = combine(
            pending.get(memory_id), AccessCount(access=1, last_at=iso_ms(at_ms))
        )

    async def load(self, tenant: str) -> Mapping[str, AccessCount]:
        """Durable counts (re-read at most every ``cache_ttl_ms``) plus this process's own
        shards not yet in them and its pending deltas."""
        durable = (await self._reads.get(tenant)).value
        own = [
            shard.deltas
            for shard in self._reads.own(tenant)
            if shard.name not in durable.seen and shard.name > durable.watermark
        ]
        # Pending deltas keep changing as accesses are recorded: the view gets them as of now.
        pending = dict(self._pending.get(tenant, {}))
        return SummedCounts(durable.counts, *own, pending)

    async def flush(self, *, final: bool = False) -> None:
        """Write one shard per tenant with pending deltas, all tenants concurrently.

        Pending deltas are taken before the write: a failed write loses them rather than
        replaying them into a shard that might, after all, have landed.
        """
        pending, self._pending = self._pending, {}
        # A shard written more than a TTL ago is in every cache entry still valid (each was read
        # after it landed), so keeping it would only grow memory for tenants nobody reads.
        self._reads.forget_old_writes()
        await asyncio.gather(
            *(self._write(tenant, deltas, final=final) for tenant, deltas in pending.items())
        )

    async def settled(self) -> None:
        """Wait for the background folds started so far."""
        while self._folds:
            await asyncio.wait(list(self._folds.values()))

    async def _read(self, tenant: str) -> _Durable:
        snapshot = await read_tenant(self._objects, tenant, merged_cache=self._merged)
        durable = _Durable(
            counts=total_counts(snapshot.merged, snapshot.shards),
            watermark=snapshot.merged.watermark,
            seen=frozenset(snapshot.shards),
        )
        self._events.shard_backlog(len(snapshot.shards))
        absorbable = absorbable_names(
            snapshot.shards,
            watermark=snapshot.merged.watermark,
            now_ms=self._clock_ms(),
            lag_ms=self._lag_ms,
        )
        if len(absorbable) > self._compact_threshold:
            self._start_fold(tenant)
        return durable

    async def _write(self, tenant: str, deltas: dict[str, AccessCount], *, final: bool) -> None:
        name = shard_name(new_ulid(self._clock_ms()), self._process_id)
        own = self._reads.writing(tenant, _OwnShard(name=name, deltas=deltas))
        try:
            await self._objects.put(COUNTER_LAYOUT.shard_key(tenant, name), encode_shard(deltas))
        except StorageError:
            self._reads.failed(tenant, own)
            self._events.flush_failed()
            logger.warning(
                "stats_final_flush_failed" if final else "stats_flush_failed",
                extra={"tenant": tenant, "memories": len(deltas)},
                exc_info=True,
            )
            return
        self._reads.done(own)

    def _start_fold(self, tenant: str) -> None:
        if tenant in self._folds:
            return
        task = asyncio.create_task(self._fold(tenant), name=f"stats-fold-{tenant}")
        self._folds[tenant] = task
        task.add_done_callback(lambda done: self._fold_done(tenant, done))

    async def _fold(self, tenant: str) -> None:
        started = time.perf_counter()
        try:
            result = await COUNTER_LOG.fold(
                self._objects,
                tenant,
                now_ms=self._clock_ms(),
                lag_ms=self._lag_ms,
                min_shards=self._compact_threshold + 1,
            )
        finally:
            self._events.fold_seconds(time.perf_counter() - started)
        if result.conflict:
            self._events.cas_conflict()

    def _fold_done(self, tenant: str, task: asyncio.Task[None]) -> None:
        self._folds.pop(tenant, None)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            logger.error(
                "stats_compaction_failed",
                extra={"tenant": tenant},
                exc_info=(type(error), error, error.__traceback__),
            )


class FlushLoop:
    """Async context manager owning the periodic flush of one CounterTracker.

    On exit the loop stops and a final flush runs under :func:`asyncio.shield`, so a shutdown that
    cancels the caller still gets this process's last counts written.
    """

    def __init__(self, tracker: CounterTracker, *, interval_ms: int) -> None:
        if interval_ms <= 0:
            raise ValueError(f"interval_ms must be positive, got {interval_ms}")
        self._tracker = tracker
        self._interval_s = interval_ms / 1000
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FlushLoop:
        if self._task is not None:
            raise RuntimeError("FlushLoop is already running")
        self._task = asyncio.create_task(self._run(), name="stats-flush-loop")
        return self

    async def __aexit__(self, *_: object) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.shield(self._final())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            await self._tracker.flush()

    async def _final(self) -> None:
        await self._tracker.flush(final=True)
        await self._tracker.settled()
