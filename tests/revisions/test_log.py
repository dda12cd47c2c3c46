"""ReplacementLog on a real store: own writes at once, another process's within the cache
window, listings paged and shared by concurrent callers."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from shared.model import new_ulid
from shared.model.keys import replaced_key
from shared.revisions import ReplacementLog, read_replacements
from shared.storage.interfaces import ObjectStore
from tests.counters._faults import Clock, FaultyStore

START_MS = 1_800_000_000_000
TTL_MS = 60_000


class CountingStore(FaultyStore):
    """The store under test, with every ``list`` call counted (by prefix)."""

    def __init__(self, inner: ObjectStore) -> None:
        super().__init__(inner)
        self.lists: list[str] = []

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        self.lists.append(prefix)
        # Let every concurrent caller reach the log before the listing answers.
        await asyncio.sleep(0.01)
        return await super().list(prefix, limit=limit, start_after=start_after)


def log(objects: ObjectStore, clock: Clock) -> ReplacementLog:
    return ReplacementLog(objects, clock_ms=clock, cache_ttl_ms=TTL_MS)


def ids(count: int) -> list[str]:
    return [new_ulid(START_MS + n) for n in range(count)]


async def test_a_record_is_visible_to_its_own_log_at_once(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    replacements = log(object_store, clock)
    old, new, newer = ids(3)
    assert not (await replacements.view("acme")).retired(old)  # cached, and empty
    await replacements.record("acme", old, new)
    seen = await replacements.view("acme")
    assert seen.retired(old) and seen.current(old) == (new,)
    # A cold tenant too: the record is in the store.
    await replacements.record("beta", new, newer)
    assert (await replacements.view("beta")).current(new) == (newer,)
    assert not (await replacements.view("acme")).retired(new)  # tenants do not mix
    assert await object_store.get(replaced_key("acme", old, new)) is not None


async def test_another_process_sees_a_record_once_its_cached_view_is_older_than_the_ttl(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    writer, reader = log(object_store, clock), log(object_store, clock)
    old, new = ids(2)
    assert not (await reader.view("acme")).retired(old)
    await writer.record("acme", old, new)
    clock.advance(TTL_MS - 1)
    assert not (await reader.view("acme")).retired(old)
    clock.advance(1)
    assert (await reader.view("acme")).current(old) == (new,)
    # A process that never looked reads the store.
    assert (await log(object_store, clock).view("acme")).retired(old)


async def test_read_replacements_pages_through_every_record(
    object_store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shared.storage.interfaces.LIST_PAGE_KEYS", 2)
    counting = CountingStore(object_store)
    chain = ids(6)
    writer = log(counting, Clock(START_MS))
    for old, new in itertools.pairwise(chain):
        await writer.record("acme", old, new)
    # A tenant whose name extends this one's is not read with it.
    await writer.record("acme2", chain[0], chain[5])
    counting.lists.clear()
    read = await read_replacements(counting, "acme")
    assert len(read) == 5
    assert read.current(chain[0]) == (chain[5],)
    assert read.versions(chain[2]) == tuple(reversed(chain))
    assert len(counting.lists) == 3  # 2 + 2 + 1


async def test_concurrent_views_of_a_cold_tenant_share_one_listing(
    object_store: ObjectStore,
) -> None:
    old, new = ids(2)
    await log(object_store, Clock(START_MS)).record("acme", old, new)
    counting = CountingStore(object_store)
    replacements = log(counting, Clock(START_MS))
    views = await asyncio.gather(*(replacements.view("acme") for _ in range(8)))
    assert all(view.retired(old) for view in views)
    assert counting.lists == ["replaced/acme/"]
    await replacements.view("acme")  # fresh: no second listing
    assert counting.lists == ["replaced/acme/"]


async def test_recording_the_same_pair_twice_is_one_record(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    replacements = log(object_store, clock)
    old, new = ids(2)
    await replacements.record("acme", old, new)
    await replacements.record("acme", old, new)
    assert (await replacements.view("acme")).pairs() == [(old, new)]
    assert (await read_replacements(object_store, "acme")).pairs() == [(old, new)]
    await log(object_store, clock).record("acme", old, new)  # another process's retry
    assert len(await read_replacements(object_store, "acme")) == 1
