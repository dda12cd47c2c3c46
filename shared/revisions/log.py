"""ReplacementLog: a tenant's replacement records as this process sees them.

A record is one empty, create-only key (``replaced/<tenant>/<old>#<new>``), written once and
never updated, like every other event here. Reads list the tenant's ``replaced/`` prefix (key
names only: 1,000 records per request) and cache the result for ``cache_ttl_ms``, the counters'
window: a replacement written by another process retires its memory here within that window,
one written by this process at once. Concurrent callers that find the cache stale share one
listing.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import msgspec

from shared.counters.tracker import DEFAULT_CACHE_TTL_MS
from shared.errors import ConflictError
from shared.model.keys import parse_replaced_key, replaced_key, replaced_prefix
from shared.revisions.chain import Replacements
from shared.storage.interfaces import ObjectStore
from shared.tasks import shared_run

DEFAULT_MAX_CACHED_TENANTS: Final = 4096
LIST_PAGE_KEYS: Final = 1000


class _Cached(msgspec.Struct, kw_only=True):
    replacements: Replacements
    read_at_ms: int
    read_seq: int


class _OwnRecord(msgspec.Struct, frozen=True, kw_only=True):
    old_id: str
    new_id: str
    done_seq: int
    done_at_ms: int


async def read_replacements(objects: ObjectStore, tenant: str) -> Replacements:
    """Every replacement record of one tenant, from key names alone."""
    pairs: list[tuple[str, str]] = []
    async for keys in objects.pages(replaced_prefix(tenant), page_size=LIST_PAGE_KEYS):
        pairs.extend(pair for pair in map(parse_replaced_key, keys) if pair is not None)
    return Replacements(pairs)


class ReplacementLog:
    """Reads and writes replacement records (see the module docstring)."""

    def __init__(
        self,
        objects: ObjectStore,
        *,
        clock_ms: Callable[[], int],
        cache_ttl_ms: int = DEFAULT_CACHE_TTL_MS,
        max_cached_tenants: int = DEFAULT_MAX_CACHED_TENANTS,
    ) -> None:
        self._objects = objects
        self._clock_ms = clock_ms
        self._cache_ttl_ms = cache_ttl_ms
        self._max_cached_tenants = max_cached_tenants
        self._cached: OrderedDict[str, _Cached] = OrderedDict()
        self._own: dict[str, list[_OwnRecord]] = {}
        self._reading: dict[str, asyncio.Future[_Cached]] = {}
        # Orders listings against completed writes without trusting the (injectable) clock.
        self._seq = itertools.count(1)

    @property
    def cache_ttl_ms(self) -> int:
        return self._cache_ttl_ms

    async def view(self, tenant: str) -> Replacements:
        """The tenant's records: listed at most ``cache_ttl_ms`` ago, plus this process's own.

        The returned object may gain this process's later records; callers only read it."""
        cached = self._fresh(tenant)
        if cached is None:
            cached = await shared_run(self._reading, tenant, lambda: self._read(tenant))
        return cached.replacements

    async def record(self, tenant: str, old_id: str, new_id: str) -> None:
        """Write one record; visible to this process's next ``view`` at once.

        Raises:
            StorageError: the write failed; nothing was recorded.
        """
        try:
            await self._objects.put(replaced_key(tenant, old_id, new_id), "", if_none_match=True)
        except ConflictError:
            pass  # the same record, written by a retry: already there
        now_ms = self._clock_ms()
        own = _OwnRecord(old_id=old_id, new_id=new_id, done_seq=next(self._seq), done_at_ms=now_ms)
        # Older than a cache entry can be, a record is in every listing still cached.
        self._own[tenant] = [
            r for r in self._own.get(tenant, []) if now_ms - r.done_at_ms < self._cache_ttl_ms
        ] + [own]
        cached = self._cached.get(tenant)
        if cached is not None:
            cached.replacements.add(old_id, new_id)

    def _fresh(self, tenant: str) -> _Cached | None:
        cached = self._cached.get(tenant)
        if cached is None or self._clock_ms() - cached.read_at_ms >= self._cache_ttl_ms:
            return None
        self._cached.move_to_end(tenant)
        return cached

    async def _read(self, tenant: str) -> _Cached:
        read_seq, read_at_ms = next(self._seq), self._clock_ms()
        replacements = await read_replacements(self._objects, tenant)
        # A record this process wrote while the listing ran may be missing from it.
        own = self._own.get(tenant, [])
        for record in own:
            if record.done_seq > read_seq:
                replacements.add(record.old_id, record.new_id)
        cached = _Cached(replacements=replacements, read_at_ms=read_at_ms, read_seq=read_seq)
        self._store(tenant, cached)
        return cached

    def _store(self, tenant: str, cached: _Cached) -> None:
        self._cached[tenant] = cached
        self._cached.move_to_end(tenant)
        while len(self._cached) > self._max_cached_tenants:
            self._cached.popitem(last=False)
        # An own record is needed only until a listing that started after it was written is
        # cached, or longer than any cache entry lives.
        now_ms = self._clock_ms()
        kept = [
            record
            for record in self._own.get(tenant, [])
            if record.done_seq > cached.read_seq and now_ms - record.done_at_ms < self._cache_ttl_ms
        ]
        if kept:
            self._own[tenant] = kept
        else:
            self._own.pop(tenant, None)


__all__ = ["DEFAULT_CACHE_TTL_MS", "ReplacementLog", "read_replacements"]
