"""fold_tenant and collect_garbage on a real store, including crashes and concurrent folders."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from services.compactor.jobs import JobContext
from services.compactor.jobs.fold_shards import fold_shards
from services.compactor.jobs.gc_shards import gc_shards
from shared.counters import (
    COUNTER_LAYOUT,
    COUNTER_LOG,
    CounterTracker,
)
from shared.counters.compaction import add_to_merged
from shared.counters.reader import read_merged
from shared.model.counters import AccessCount
from shared.model.ids import iso_ms
from shared.storage.interfaces import ObjectStore
from tests.counters._faults import Clock, FaultyStore, SimulatedCrashError
from tests.counters.test_tracker import LAG_MS, START_MS, write_old_shards


async def shard_count(objects: ObjectStore, tenant: str) -> int:
    return len(await objects.list(COUNTER_LAYOUT.shard_prefix(tenant), limit=100_000))


async def test_fold_then_garbage_collection_after_a_crash_never_double_counts(
    object_store: ObjectStore,
) -> None:
    await write_old_shards(object_store, "t", count=5, at_ms=START_MS - LAG_MS)
    crashing = FaultyStore(object_store, crash_delete_probability=1.0)
    with pytest.raises(SimulatedCrashError):
        await COUNTER_LOG.fold(crashing, "t", now_ms=START_MS, lag_ms=LAG_MS)
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 5
    assert await shard_count(object_store, "t") == 5  # left behind, below the watermark
    reader = CounterTracker(
        object_store, process_id="r", compact_threshold=0, clock_ms=lambda: START_MS
    )
    assert (await reader.load("t"))["m"].access == 5
    again = await COUNTER_LOG.fold(object_store, "t", now_ms=START_MS, lag_ms=LAG_MS)
    assert again.shards_folded == 0
    assert await COUNTER_LOG.collect_garbage(object_store, "t") == 5
    assert await shard_count(object_store, "t") == 0
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 5
    assert await COUNTER_LOG.collect_garbage(object_store, "t") == 0


async def test_collect_garbage_keeps_shards_above_the_watermark(object_store: ObjectStore) -> None:
    await write_old_shards(object_store, "t", count=3, at_ms=START_MS - LAG_MS)
    assert (
        await COUNTER_LOG.collect_garbage(object_store, "t") == 0
    )  # no merged.json: nothing is absorbed
    crashing = FaultyStore(object_store, crash_delete_probability=1.0)
    with pytest.raises(SimulatedCrashError):
        await COUNTER_LOG.fold(crashing, "t", now_ms=START_MS, lag_ms=LAG_MS)
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS)
    assert await COUNTER_LOG.collect_garbage(object_store, "t") == 3
    assert await shard_count(object_store, "t") == 2


async def test_fold_respects_min_and_max_shards(object_store: ObjectStore) -> None:
    await write_old_shards(object_store, "t", count=5, at_ms=START_MS - LAG_MS)
    skipped = await COUNTER_LOG.fold(
        object_store, "t", now_ms=START_MS, lag_ms=LAG_MS, min_shards=6
    )
    assert skipped.shards_folded == 0
    first = await COUNTER_LOG.fold(object_store, "t", now_ms=START_MS, lag_ms=LAG_MS, max_shards=3)
    assert (first.shards_folded, first.shards_deleted) == (3, 3)
    second = await COUNTER_LOG.fold(object_store, "t", now_ms=START_MS, lag_ms=LAG_MS, max_shards=3)
    assert (second.shards_folded, second.shards_deleted) == (2, 2)
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 5


async def test_two_folders_racing_fold_each_shard_exactly_once(object_store: ObjectStore) -> None:
    await write_old_shards(object_store, "t", count=40, at_ms=START_MS - LAG_MS)
    racing = FaultyStore(object_store, reads_together=6)
    results = await asyncio.gather(
        *(COUNTER_LOG.fold(racing, "t", now_ms=START_MS, lag_ms=LAG_MS) for _ in range(6))
    )
    assert sum(r.shards_folded for r in results) == 40
    assert any(r.conflict for r in results)
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 40


class _Simulation:
    """Processes flushing with skewed clocks and slow writes, readers and two compactors' fold jobs,
    crashes between compare-and-swap and delete; everything against one real store."""

    TENANTS = ("alpha", "beta")
    MEMORIES = tuple(f"m{i}" for i in range(8))

    def __init__(self, objects: ObjectStore, rng: random.Random) -> None:
        self.objects = objects
        self.rng = rng
        self.clock = Clock(START_MS)
        self.expected: Counter[tuple[str, str]] = Counter()
        self.stores: list[FaultyStore] = []
        self.processes: list[tuple[CounterTracker, FaultyStore]] = []
        for i, skew_ms in enumerate((0, 0, 3_000, -50_000)):
            store = self._store(crash=0.3)
            counters = CounterTracker(
                store,
                process_id=f"proc{i}",
                compact_threshold=2,
                clock_ms=self.clock.offset(skew_ms),
            )
            self.processes.append((counters, store))
        self.compactors = [self._store(crash=0.3) for _ in range(2)]
        self.gates: list[tuple[int, asyncio.Event]] = []
        self.in_flight: list[asyncio.Task[None]] = []
        self.compactor_crashes = 0
        self.conflicts = 0

    def _store(self, *, crash: float) -> FaultyStore:
        store = FaultyStore(
            self.objects,
            crash_delete_probability=crash,
            rng=random.Random(self.rng.random()),
        )
        self.stores.append(store)
        return store

    def record_some(self) -> None:
        for counters, _ in self.processes:
            for _ in range(self.rng.randrange(0, 6)):
                tenant, memory = self.rng.choice(self.TENANTS), self.rng.choice(self.MEMORIES)
                counters.record(tenant, memory, at_ms=self.clock())
                self.expected[tenant, memory] += 1

    def flush_some(self, step: int) -> None:
        for counters, store in self.processes:
            if self.rng.random() < 0.5:
                continue
            # Some writes are slow: stamped now, landing up to three steps (≤ 9 s) later.
            gate = asyncio.Event()
            store.shard_gate = gate
            self.in_flight.append(asyncio.create_task(counters.flush()))
            store.shard_gate = None
            self.gates.append((step + self.rng.randrange(0, 4), gate))

    def open_due_gates(self, step: int) -> None:
        for due, gate in self.gates:
            if due <= step:
                gate.set()

    async def compact(self, store: FaultyStore) -> None:
        """One run of the compactor's fold job (and sometimes its GC job) on this store."""
        ctx = JobContext(objects=store, clock_ms=self.clock, lag_ms=LAG_MS)
        try:
            result = await fold_shards(ctx)
            self.conflicts += result.conflicts
            assert result.tenants_failed == 0
            if self.rng.random() < 0.2:
                await gc_shards(ctx)
        except SimulatedCrashError:
            self.compactor_crashes += 1

    async def read(self) -> None:
        counters, _ = self.rng.choice(self.processes)
        for tenant in self.TENANTS:
            await counters.load(tenant)

    async def run(self, steps: int) -> None:
        for step in range(steps):
            self.clock.advance(self.rng.randrange(1_000, 3_001))
            self.record_some()
            self.flush_some(step)
            await asyncio.sleep(0)  # let the new flushes stamp their names before anything else
            self.open_due_gates(step)
            await asyncio.gather(self.read(), *(self.compact(s) for s in self.compactors))
        for _, gate in self.gates:
            gate.set()
        await asyncio.gather(*self.in_flight)
        for counters, _ in self.processes:
            await counters.flush(final=True)
            await counters.settled()

    async def drain(self) -> dict[tuple[str, str], int]:
        """Fold everything with nobody crashing, long after the last write."""
        for store in self.stores:
            store.crash_delete_probability = 0.0
        self.clock.advance(10 * LAG_MS)
        folded: dict[tuple[str, str], int] = {}
        for tenant in self.TENANTS:
            await COUNTER_LOG.fold(self.objects, tenant, now_ms=self.clock(), lag_ms=LAG_MS)
            await COUNTER_LOG.collect_garbage(self.objects, tenant)
            assert await shard_count(self.objects, tenant) == 0
            for memory, count in (await read_merged(self.objects, tenant)).merged.counts.items():
                folded[tenant, memory] = count.access
        return folded


@pytest.mark.parametrize("seed", [1])
async def test_many_processes_two_compactors_and_crashes_fold_exactly_what_was_flushed(
    object_store: ObjectStore, seed: int
) -> None:
    simulation = _Simulation(object_store, random.Random(seed))
    await simulation.run(steps=25)
    # Before the final fold: a fresh reader already sees exactly what was flushed.
    reader = CounterTracker(
        object_store, process_id="check", compact_threshold=10**6, clock_ms=simulation.clock
    )
    for tenant in simulation.TENANTS:
        seen = {memory: c.access for memory, c in (await reader.load(tenant)).items()}
        wanted = {m: n for (t, m), n in simulation.expected.items() if t == tenant}
        assert seen == wanted
    folded = await simulation.drain()
    assert folded == dict(simulation.expected)
    assert sum(folded.values()) > 60
    crashes = simulation.compactor_crashes + sum(s.crashes for s in simulation.stores)
    assert crashes > 0
    assert simulation.conflicts > 0


async def test_counts_from_an_import_are_added_to_merged_and_keep_the_watermark(
    object_store: ObjectStore,
) -> None:
    await write_old_shards(object_store, "t", count=2, at_ms=START_MS - 2 * LAG_MS)
    folded = await COUNTER_LOG.fold(object_store, "t", now_ms=START_MS, lag_ms=LAG_MS)
    assert folded.shards_folded == 2
    before = (await read_merged(object_store, "t")).merged
    imported = {
        "m": AccessCount(access=5, last_at=iso_ms(START_MS)),
        "n": AccessCount(access=1, last_at=iso_ms(START_MS)),
    }
    await add_to_merged(object_store, "t", imported)
    after = (await read_merged(object_store, "t")).merged
    assert after.watermark == before.watermark
    assert after.counts["m"].access == 2 + 5 and after.counts["n"].access == 1
