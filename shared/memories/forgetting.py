"""Forgets a crash interrupted, finished by whoever meets them next.

A forget deletes a memory's vector, then its lexicon entry, then its keys: the vector first, so
that no failure part-way leaves a memory recall still finds. But a process killed after the
vectors of a bulk forget leaves up to a thousand index keys with no body behind them: counted by
``memory_stats``, skipped by ``list_memories`` a page at a time, and out of reach of the same
forget run again (a category or tag filter reads bodies, and theirs are gone). So a forget first
writes down what it is about to delete, and takes the record away when it is done::

    forgetting/<tenant>/<ulid>.json    {"ids": [...], "keys": [...]}; one forget in progress

Every reader of the index (stats, list, bulk forget) asks ``ForgetJournal.pending`` first. The
ids of every record are treated as gone at once: the caller asked for them to be forgotten,
and whether the process doing it is alive or dead, they are on their way out. A record older
than the lag is finished by the reader: its writer is dead or stalled far past what a forget
takes (seconds), and the deletes are safe to repeat (deleting what is gone is a no-op, and ids
are never reused). A younger record may be a forget still running in another process, so it is
only read.

One listing of the tenant's ``forgetting/`` prefix per read would be a request on every list
and stats call; a tenant seen with no record is not asked again for ``RECHECK_MS``. A forget
this process starts is seen at once all the same (its record is known locally), and another
process's is at worst seen when its record is already gone or once the recheck is due.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import msgspec

from shared.errors import StorageError
from shared.model.ids import new_ulid, ulid_time_ms
from shared.storage.interfaces import ObjectStore

logger = logging.getLogger(__name__)

FORGETTING_ROOT: Final = "forgetting/"
# How long a tenant listed with no unfinished forget is not listed again. Well under the lag,
# so a record a crash left is finished within about one lag of the crash.
RECHECK_MS: Final = 10_000
# Tenants remembered as clean at most; beyond it the oldest half is dropped (re-listed once).
_CLEAN_TENANTS_CAP: Final = 10_000


class ForgetRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What one forget is about to delete: the memories' ids and their keys."""

    ids: list[str]
    keys: list[str]


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ForgetRecord)

# Deletes a forget's vectors, lexicon entries and keys (``MemoryDeleter._delete_now``).
Deleter = Callable[[str, Sequence[str], Sequence[str]], Awaitable[None]]


def record_prefix(tenant: str) -> str:
    return f"{FORGETTING_ROOT}{tenant}/"


class ForgetJournal:
    """Records of forgets in progress on one object store, and the finishing of stale ones."""

    def __init__(self, objects: ObjectStore, *, clock_ms: Callable[[], int], lag_ms: int) -> None:
        self._objects = objects
        self._clock_ms = clock_ms
        self._lag_ms = lag_ms
        # Tenant -> when it was last listed with no record in it.
        self._clean_at: dict[str, int] = {}
        # This process's own forgets in progress: tenant -> record key -> ids.
        self._running: dict[str, dict[str, frozenset[str]]] = {}

    async def begin(self, tenant: str, ids: Sequence[str], keys: Sequence[str]) -> str:
        """Write the record of a forget about to start; its key, for ``end``.

        Raises:
            StorageError: nothing was recorded, so nothing may be deleted.
        """
        key = f"{record_prefix(tenant)}{new_ulid(self._clock_ms())}.json"
        body = _encoder.encode(ForgetRecord(ids=list(ids), keys=list(keys))).decode()
        await self._objects.put(key, body, if_none_match=True)
        self._running.setdefault(tenant, {})[key] = frozenset(ids)
        return key

    async def end(self, tenant: str, key: str) -> None:
        """Take the record of a finished forget away. A failure is logged, not raised: the
        forget itself is done, and the record left behind is finished again, harmlessly, by
        the next reader once older than the lag."""
        self._running.get(tenant, {}).pop(key, None)
        try:
            await self._objects.delete([key])
        except StorageError:
            logger.warning("forget_record_cleanup_failed", extra={"tenant": tenant})

    async def pending(self, tenant: str, finish: Deleter) -> frozenset[str]:
        """The ids of every forget of ``tenant`` not yet finished, after finishing each one
        older than the lag with ``finish``; what is finished is no longer pending."""
        running = frozenset().union(*self._running.get(tenant, {}).values())
        now_ms = self._clock_ms()
        clean_at = self._clean_at.get(tenant)
        if clean_at is not None and now_ms - clean_at < RECHECK_MS:
            return running
        keys = [
            key
            async for page in self._objects.pages(record_prefix(tenant))
            for key in page
            if key not in self._running.get(tenant, {})
        ]
        if not keys:
            self._remember_clean(tenant, now_ms)
            return running
        self._clean_at.pop(tenant, None)
        pending: set[str] = set(running)
        for key in keys:
            record = await self._read(key)
            if record is None:
                continue
            if self._settled(key, now_ms):
                await finish(tenant, record.ids, record.keys)
                await self._objects.delete([key])
                logger.info(
                    "interrupted_forget_finished",
                    extra={"tenant": tenant, "deleted": len(record.ids)},
                )
            else:
                pending.update(record.ids)
        return frozenset(pending)

    async def _read(self, key: str) -> ForgetRecord | None:
        stored = await self._objects.get(key)
        if stored is None:
            return None  # finished meanwhile
        try:
            return _decoder.decode(stored.body)
        except msgspec.DecodeError:
            # Not ours to interpret; left for an operator rather than guessed at.
            logger.warning("forget_record_unreadable", extra={"key": key})
            return None

    def _settled(self, key: str, now_ms: int) -> bool:
        name = key.rsplit("/", 1)[-1].removesuffix(".json")
        written_ms = ulid_time_ms(name)
        return written_ms is not None and written_ms <= now_ms - self._lag_ms

    def _remember_clean(self, tenant: str, now_ms: int) -> None:
        if len(self._clean_at) >= _CLEAN_TENANTS_CAP:
            oldest = sorted(self._clean_at, key=self._clean_at.__getitem__)
            for stale in oldest[: _CLEAN_TENANTS_CAP // 2]:
                del self._clean_at[stale]
        self._clean_at[tenant] = now_ms
