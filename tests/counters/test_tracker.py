"""CounterTracker on a real store: behaviour.md §5, case by case."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

import pytest

from shared.counters import (
    COUNTER_LAYOUT,
    COUNTER_LOG,
    CounterTracker,
    FlushLoop,
    decode_shard,
    encode_merged,
    encode_shard,
)
from shared.counters.reader import MergedCache, MergedRead, read_merged
from shared.model.counters import AccessCount, MergedCounters
from shared.model.ids import iso_ms
from shared.storage import interfaces
from shared.storage.interfaces import ObjectStore
from tests.counters._faults import Clock, FaultyStore, RecordedEvents
from tests.counters._names import name_at

START_MS = 1_800_000_000_000
LAG_MS = 60_000


def tracker(
    objects: ObjectStore,
    clock: Clock,
    *,
    process_id: str = "p1",
    threshold: int = 20,
    events: RecordedEvents | None = None,
    skew_ms: int = 0,
    max_cached_tenants: int = 4096,
) -> CounterTracker:
    return CounterTracker(
        objects,
        process_id=process_id,
        compact_threshold=threshold,
        events=events,
        clock_ms=clock.offset(skew_ms),
        max_cached_tenants=max_cached_tenants,
    )


async def shard_names(objects: ObjectStore, tenant: str) -> list[str]:
    prefix = COUNTER_LAYOUT.shard_prefix(tenant)
    return [key[len(prefix) :] for key in await objects.list(prefix)]


async def write_old_shards(objects: ObjectStore, tenant: str, *, count: int, at_ms: int) -> None:
    for i in range(count):
        body = encode_shard({"m": AccessCount(access=1, last_at=iso_ms(at_ms))})
        await objects.put(COUNTER_LAYOUT.shard_key(tenant, name_at(at_ms, "old", suffix=i)), body)


def accesses(counts: object, memory_id: str = "m") -> int:
    assert isinstance(counts, Mapping)
    entry = counts.get(memory_id)
    return 0 if entry is None else entry.access


async def test_own_pending_counts_are_visible_at_once(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock)
    counters.record("t", "m", at_ms=START_MS)
    counters.record("t", "m", at_ms=START_MS + 5)
    counts = await counters.load("t")
    assert counts["m"] == AccessCount(access=2, last_at=iso_ms(START_MS + 5))
    assert await object_store.list("stats/") == []


async def test_flush_writes_one_shard_per_tenant(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock, process_id="proc-a")
    for memory_id in ("m1", "m2", "m1"):
        counters.record("t1", memory_id, at_ms=START_MS)
    counters.record("t2", "m9", at_ms=START_MS)
    await counters.flush()
    names = await shard_names(object_store, "t1")
    assert len(names) == 1
    assert names[0].endswith("-proc-a.json")
    stored = await object_store.get(COUNTER_LAYOUT.shard_key("t1", names[0]))
    assert stored is not None
    assert decode_shard(stored.body) == {
        "m1": AccessCount(access=2, last_at=iso_ms(START_MS)),
        "m2": AccessCount(access=1, last_at=iso_ms(START_MS)),
    }
    assert len(await shard_names(object_store, "t2")) == 1
    await counters.flush()  # nothing pending: nothing written
    assert len(await object_store.list("stats/")) == 2


async def test_own_flushed_counts_neither_vanish_nor_double_before_the_re_read(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock)
    assert await counters.load("t") == {}  # cached: empty
    counters.record("t", "m", at_ms=START_MS)
    await counters.flush()
    assert accesses(await counters.load("t")) == 1  # from the cache plus its own shard
    clock.advance(60_000)
    assert accesses(await counters.load("t")) == 1  # re-read: the shard, counted once


async def test_durable_counts_are_re_read_after_the_cache_ttl(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    reader = tracker(object_store, clock, process_id="reader")
    writer = tracker(object_store, clock, process_id="writer")
    assert await reader.load("t") == {}
    writer.record("t", "m", at_ms=START_MS)
    await writer.flush()
    clock.advance(59_999)
    assert await reader.load("t") == {}
    clock.advance(1)
    assert accesses(await reader.load("t")) == 1


async def test_the_cache_is_bounded_and_evicts_the_least_recent_tenant(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    reader = tracker(object_store, clock, process_id="reader", max_cached_tenants=2)
    writer = tracker(object_store, clock, process_id="writer")
    for tenant in ("a", "b", "c"):
        await reader.load(tenant)
        writer.record(tenant, "m", at_ms=START_MS)
    await writer.flush()
    # "a" was evicted when "c" arrived, so it is read again; "c" is still cached.
    assert accesses(await reader.load("a")) == 1
    assert accesses(await reader.load("c")) == 0


async def test_a_failed_write_loses_its_counts_and_says_so(
    object_store: ObjectStore, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(START_MS)
    events = RecordedEvents()
    faulty = FaultyStore(object_store, fail_puts_under="stats/t/shard/")
    counters = tracker(faulty, clock, events=events)
    counters.record("t", "m", at_ms=START_MS)
    counters.record("u", "m", at_ms=START_MS)
    with caplog.at_level(logging.WARNING):
        await counters.flush()
    assert [r.message for r in caplog.records] == ["stats_flush_failed"]
    assert caplog.records[0].__dict__["tenant"] == "t"
    assert events.flush_failures == 1
    assert accesses(await counters.load("t")) == 0  # lost, not replayed
    faulty.fail_puts_under = None
    await counters.flush()
    assert await object_store.list("stats/t/") == []
    assert len(await object_store.list("stats/u/")) == 1


async def test_a_read_folds_in_the_background_once_more_than_the_threshold_are_old(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    events = RecordedEvents()
    counters = tracker(object_store, clock, threshold=3, events=events)
    await write_old_shards(object_store, "t", count=3, at_ms=START_MS - LAG_MS)
    assert accesses(await counters.load("t")) == 3
    await counters.settled()
    assert (await object_store.get(COUNTER_LAYOUT.merged_key("t"))) is None  # 3 is not more than 3
    await write_old_shards(object_store, "t", count=1, at_ms=START_MS - LAG_MS - 1)
    clock.advance(60_000)
    assert accesses(await counters.load("t")) == 4
    await counters.settled()
    merged = (await read_merged(object_store, "t")).merged
    assert merged.counts["m"].access == 4
    assert await shard_names(object_store, "t") == []
    assert len(events.folds) == 1
    assert events.backlogs == [3, 4]
    clock.advance(60_000)
    assert accesses(await counters.load("t")) == 4


async def test_young_shards_are_counted_but_not_folded(object_store: ObjectStore) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock, threshold=0)
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS - LAG_MS + 1)
    assert accesses(await counters.load("t")) == 2
    await counters.settled()
    assert await object_store.get(COUNTER_LAYOUT.merged_key("t")) is None
    assert len(await shard_names(object_store, "t")) == 2


async def test_the_loser_of_the_compare_and_swap_does_nothing_else(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    events = RecordedEvents()
    winner_body = encode_merged(MergedCounters(watermark="~winner"))

    async def someone_else_folds_first() -> None:
        await object_store.put(COUNTER_LAYOUT.merged_key("t"), winner_body, if_none_match=True)

    faulty = FaultyStore(object_store, before_conditional_put=someone_else_folds_first)
    counters = tracker(faulty, clock, threshold=0, events=events)
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS - LAG_MS)
    await counters.load("t")
    await counters.settled()
    assert events.conflicts == 1
    stored = await object_store.get(COUNTER_LAYOUT.merged_key("t"))
    assert stored is not None
    assert stored.body == winner_body
    assert len(await shard_names(object_store, "t")) == 2  # nothing deleted


async def test_an_unreadable_merged_json_reads_empty_and_a_fold_replaces_it(
    object_store: ObjectStore, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(START_MS)
    await object_store.put(COUNTER_LAYOUT.merged_key("t"), "{not json")
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS - LAG_MS)
    counters = tracker(object_store, clock, threshold=1)
    with caplog.at_level(logging.WARNING):
        assert accesses(await counters.load("t")) == 2
    assert "stats_merged_unreadable" in [r.message for r in caplog.records]
    await counters.settled()
    merged = (await read_merged(object_store, "t")).merged
    assert merged.counts["m"].access == 2


async def test_a_corrupt_shard_is_skipped_and_its_neighbours_counted(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS - LAG_MS)
    await object_store.put(
        COUNTER_LAYOUT.shard_key("t", name_at(START_MS - LAG_MS, "bad")), "[1, 2"
    )
    counters = tracker(object_store, clock, threshold=2)
    assert accesses(await counters.load("t")) == 2
    await counters.settled()
    # Absorbed as an empty shard, so it is folded and removed with the others.
    assert await shard_names(object_store, "t") == []
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 2


async def test_a_read_pages_through_every_shard(
    object_store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of 10 exercise the same loop as pages of 1,000, without writing thousands of shards.
    monkeypatch.setattr(interfaces, "LIST_PAGE_KEYS", 10)
    clock = Clock(START_MS)
    body = encode_shard({"m": AccessCount(access=1, last_at=iso_ms(START_MS))})
    await asyncio.gather(
        *(
            object_store.put(COUNTER_LAYOUT.shard_key("t", name_at(START_MS, "w", suffix=i)), body)
            for i in range(35)
        )
    )
    counters = tracker(object_store, clock, threshold=10_000)
    assert accesses(await counters.load("t")) == 35


async def test_a_clock_fifty_seconds_behind_is_not_folded_early_and_never_lost(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    slow = tracker(object_store, clock, process_id="slow", skew_ms=-50_000)
    reader = tracker(object_store, clock, process_id="reader", threshold=0)
    await write_old_shards(object_store, "t", count=1, at_ms=START_MS - LAG_MS)
    slow.record("t", "m", at_ms=slow_now(clock))
    await slow.flush()  # stamped 50 s ago by the reader's clock
    assert accesses(await reader.load("t")) == 2
    await reader.settled()
    merged = (await read_merged(object_store, "t")).merged
    assert merged.counts["m"].access == 1  # only the truly old shard
    assert len(await shard_names(object_store, "t")) == 1
    clock.advance(10_000)  # now the slow shard is a lag old by a reader's clock
    later = tracker(object_store, clock, process_id="later", threshold=0)
    assert accesses(await later.load("t")) == 2
    await later.settled()
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 2
    assert await shard_names(object_store, "t") == []


def slow_now(clock: Clock) -> int:
    return clock() - 50_000


async def test_flush_loop_flushes_on_its_interval_and_once_more_on_exit(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock)
    async with FlushLoop(counters, interval_ms=20):
        counters.record("t", "m", at_ms=START_MS)
        for _ in range(200):
            await asyncio.sleep(0.01)
            if await object_store.list("stats/t/shard/"):
                break
        assert len(await object_store.list("stats/t/shard/")) == 1
        counters.record("t", "m", at_ms=START_MS)
        clock.advance(1)
    assert len(await object_store.list("stats/t/shard/")) == 2


async def test_the_final_flush_survives_the_caller_being_cancelled(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    counters = tracker(object_store, clock)

    async def serve() -> None:
        async with FlushLoop(counters, interval_ms=60_000):
            counters.record("t", "m", at_ms=START_MS)
            await asyncio.sleep(3600)

    task = asyncio.create_task(serve())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(await object_store.list("stats/t/shard/")) == 1


async def test_callers_that_find_the_cache_stale_together_share_one_read(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    await object_store.put(
        COUNTER_LAYOUT.merged_key("t"),
        encode_merged(
            MergedCounters(counts={"m": AccessCount(access=3, last_at=iso_ms(START_MS))})
        ),
    )
    store = FaultyStore(object_store)
    counters = tracker(store, clock)
    loads = await asyncio.gather(*(counters.load("t") for _ in range(8)))
    assert [accesses(counts) for counts in loads] == [3] * 8
    assert store.gets.count(COUNTER_LAYOUT.merged_key("t")) == 1
    clock.advance(60_000)  # the cache entry is stale: the next callers read again, once
    await object_store.put(
        COUNTER_LAYOUT.merged_key("t"),
        encode_merged(
            MergedCounters(counts={"m": AccessCount(access=4, last_at=iso_ms(START_MS))})
        ),
    )
    loads = await asyncio.gather(*(counters.load("t") for _ in range(8)))
    assert [accesses(counts) for counts in loads] == [4] * 8
    assert store.gets.count(COUNTER_LAYOUT.merged_key("t")) == 2


async def test_a_cold_read_reuses_unchanged_merged_counts_after_one_etag_check(
    object_store: ObjectStore,
) -> None:
    clock = Clock(START_MS)
    counts = {f"m{n}": AccessCount(access=n + 1, last_at=iso_ms(START_MS)) for n in range(50)}
    await object_store.put(
        COUNTER_LAYOUT.merged_key("t"), encode_merged(MergedCounters(counts=counts))
    )
    store = FaultyStore(object_store)
    counters = tracker(store, clock)
    assert accesses(await counters.load("t"), "m9") == 10
    for _ in range(3):
        clock.advance(60_000)  # stale every time: a cold read, but merged.json is unchanged
        assert accesses(await counters.load("t"), "m9") == 10
    assert store.gets.count(COUNTER_LAYOUT.merged_key("t")) == 1
    # A fold lands (new etag): the next cold read decodes the new body, and shards still count.
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS)
    await COUNTER_LOG.fold(object_store, "t", now_ms=START_MS + 2 * LAG_MS, lag_ms=LAG_MS)
    clock.advance(60_000)
    assert accesses(await counters.load("t"), "m") == 2
    assert store.gets.count(COUNTER_LAYOUT.merged_key("t")) == 2


def test_the_merged_cache_is_bounded_by_entries_not_tenants() -> None:
    cache = MergedCache(max_entries=5)
    two = MergedRead(
        merged=MergedCounters(
            counts={m: AccessCount(access=1, last_at=iso_ms(START_MS)) for m in ("a", "b")}
        ),
        etag="e1",
    )
    for tenant in ("t1", "t2", "t3"):
        cache._keep(tenant, two)
    assert cache.entries == 4  # t1 dropped: 6 entries would be over 5
    six = MergedRead(
        merged=MergedCounters(
            counts={str(n): AccessCount(access=1, last_at=iso_ms(START_MS)) for n in range(6)}
        ),
        etag="e2",
    )
    cache._keep("big", six)
    assert cache.entries == 4  # larger than the whole bound: not kept
