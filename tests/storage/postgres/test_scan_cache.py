"""The in-process exact scan answers what the SQL scan answers, and never a stale tenant.

Two stores opened on one database stand for two pods: what one writes, the other's next query
sees, whatever snapshot it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg
import msgspec
import numpy as np
import pytest

from shared.config import load_config
from shared.errors import ConfigError, EmbeddingError, StorageError
from shared.model import Hit, Memory, new_ulid
from shared.storage import VectorStore, open_stores
from shared.storage.codec import to_metadata
from shared.storage.postgres import PostgresVectorStore
from shared.storage.postgres.scan import AddedRow, ScanCache, SnapshotVectorStore, TenantSnapshot

NOW_MS = 1_767_225_600_000
WIDTH = 384


def memory(tenant: str, content: str) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS), tenant=tenant, content=content, created_at="2026-01-01T00:00:00.000Z"
    )


@contextlib.asynccontextmanager
async def pod(pg_url: str, cache_mb: int = 64) -> AsyncIterator[VectorStore]:
    """The vector store the factory opens: inside its snapshots, or plain with 0 MB."""
    config = load_config({"DATABASE_URL": pg_url, "PG_SCAN_CACHE_MB": str(cache_mb)})
    async with open_stores(config) as stores:
        yield stores.vectors


def cache_of(store: VectorStore) -> ScanCache:
    assert isinstance(store, SnapshotVectorStore)
    return store.snapshots


def newest_held(store: VectorStore, tenant: str) -> TenantSnapshot | None:
    """The tenant's newest snapshot, whatever its generation (the cache's own view of it)."""
    return cache_of(store)._lru.get(tenant)


def ranked(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(hit.memory.id, hit.similarity) for hit in hits]


def assert_same_ranking(cached: list[Hit], scanned: list[Hit]) -> None:
    assert [hit.memory for hit in cached] == [hit.memory for hit in scanned]
    for mine, theirs in zip(cached, scanned, strict=True):
        assert mine.similarity == pytest.approx(theirs.similarity, abs=1e-5)


def added_row(written: Memory, vector: np.ndarray) -> AddedRow:
    """What the store's put hands the cache for ``written`` (see apply_own_write)."""
    metadata = to_metadata(written)
    return (written.id, vector.astype(np.float32), metadata, len(msgspec.json.encode(metadata)))


async def filled_and_held(
    store: VectorStore, count: int, seed: int
) -> tuple[ScanCache, TenantSnapshot]:
    """``count`` memories in tenant acme, and the snapshot the store then holds of them."""
    await fill(store, "acme", count, seed=seed)
    cache = cache_of(store)
    held = await cache.refresh("acme")
    assert held is not None
    return cache, held


async def fill(store: VectorStore, tenant: str, count: int, seed: int) -> list[Memory]:
    rng = np.random.default_rng(seed)
    stored = []
    for n in range(count):
        written = memory(tenant, f"{tenant} fact {n}")
        await store.put(written, rng.standard_normal(WIDTH).tolist())
        stored.append(written)
    return stored


async def test_a_snapshot_ranks_exactly_as_the_sql_scan(pg_url: str) -> None:
    async with pod(pg_url) as store, pod(pg_url, cache_mb=0) as uncached:
        await fill(store, "acme", 300, seed=1)
        await fill(store, "other", 40, seed=2)
        # A zero vector has no direction: pgvector sorts it last with similarity 0.
        zero = memory("acme", "no direction")
        await store.put(zero, [0.0] * WIDTH)
        queries = np.random.default_rng(3).standard_normal((8, WIDTH)).tolist()
        scanned = [await uncached.query("acme", query, top_k=100) for query in queries]
        scanned_all = await uncached.query("acme", queries[0], top_k=400)

        cache = cache_of(store)
        assert await cache.refresh("acme") is not None
        hits_before = cache.stats.hits
        cached = [await store.query("acme", query, top_k=100) for query in queries]
        cached_all = await store.query("acme", queries[0], top_k=400)

        assert cache.stats.hits - hits_before == len(queries) + 1
        for mine, theirs in zip(cached, scanned, strict=True):
            assert len(mine) == 100
            assert_same_ranking(mine, theirs)
        # top_k is capped at 100 both ways; every row is a tenant row.
        assert_same_ranking(cached_all, scanned_all)
        assert {hit.memory.tenant for hit in cached_all} == {"acme"}


async def test_every_row_takes_part_when_the_tenant_has_fewer_than_top_k(pg_url: str) -> None:
    async with pod(pg_url) as store:
        stored = await fill(store, "acme", 5, seed=4)
        zero = memory("acme", "no direction")
        await store.put(zero, [0.0] * WIDTH)
        await cache_of(store).refresh("acme")
        hits = await store.query("acme", np.ones(WIDTH).tolist(), top_k=10)
        assert cache_of(store).stats.hits == 1
        assert {hit.memory.id for hit in hits} == {m.id for m in stored} | {zero.id}
        assert hits[-1].memory.id == zero.id and hits[-1].similarity == 0.0
        similarities = [hit.similarity for hit in hits[:-1]]
        assert similarities == sorted(similarities, reverse=True)


async def test_another_pods_write_and_delete_show_in_the_very_next_query(pg_url: str) -> None:
    async with pod(pg_url) as reader, pod(pg_url) as writer:
        await fill(writer, "acme", 50, seed=5)
        target = np.random.default_rng(6).standard_normal(WIDTH)
        assert await cache_of(reader).refresh("acme") is not None
        before = await reader.query("acme", target.tolist(), top_k=3)
        assert cache_of(reader).stats.hits == 1

        nearest = memory("acme", "the newest and nearest")
        await writer.put(nearest, target.tolist())
        after_put = await reader.query("acme", target.tolist(), top_k=3)
        assert after_put[0].memory == nearest
        assert after_put[0].similarity == pytest.approx(1.0, abs=1e-5)

        await writer.delete("acme", [nearest.id])
        after_delete = await reader.query("acme", target.tolist(), top_k=3)
        assert [hit.memory for hit in after_delete] == [hit.memory for hit in before]


async def test_a_write_committed_before_the_query_is_seen_though_the_vector_comes_later(
    pg_url: str,
) -> None:
    """A query given a vector still being computed reads the generation meanwhile: a write that
    landed before the call must still be in the answer, even when another lands before the
    vector."""
    async with pod(pg_url) as reader, pod(pg_url) as writer:
        await fill(writer, "acme", 20, seed=8)
        assert await cache_of(reader).refresh("acme") is not None
        target = np.random.default_rng(9).standard_normal(WIDTH)
        before_call = memory("acme", "written before the recall")
        await writer.put(before_call, target.tolist())
        vector_wanted = asyncio.Event()
        release = asyncio.Event()

        async def embedding() -> list[float]:
            vector_wanted.set()
            await release.wait()
            values: list[float] = target.tolist()
            return values

        querying = asyncio.create_task(
            reader.query("acme", asyncio.ensure_future(embedding()), top_k=3)
        )
        await vector_wanted.wait()
        await writer.put(memory("acme", "written while embedding"), (-target).tolist())
        release.set()
        hits = await querying
        assert hits[0].memory == before_call


async def test_a_failed_embedding_stops_the_generation_read_begun_beside_it(pg_url: str) -> None:
    async with pod(pg_url) as store:
        await fill(store, "acme", 3, seed=10)
        blocker = await asyncpg.connect(pg_url)
        try:
            # Holds the generation read until it is cancelled: it cannot finish on its own.
            transaction = blocker.transaction()
            await transaction.start()
            await blocker.execute("LOCK TABLE memory_generations IN ACCESS EXCLUSIVE MODE")
            before = asyncio.all_tasks()

            async def embedding() -> list[float]:
                await asyncio.sleep(0.2)  # long enough for the read to be waiting on the lock
                raise EmbeddingError("the model is gone")

            with pytest.raises(EmbeddingError):
                await store.query("acme", asyncio.ensure_future(embedding()), top_k=3)
            await asyncio.sleep(0.1)
            assert [t for t in asyncio.all_tasks() - before if not t.done()] == []
        finally:
            await transaction.rollback()
            await blocker.close()


async def test_a_refresh_reads_only_the_rows_added_and_drops_the_deleted(pg_url: str) -> None:
    async with pod(pg_url) as store:
        stored = await fill(store, "acme", 20, seed=7)
        first = await cache_of(store).refresh("acme")
        assert first is not None and len(first.rows) == 20
        added = await fill(store, "acme", 3, seed=8)
        await store.delete("acme", [stored[0].id, stored[1].id])
        second = await cache_of(store).refresh("acme")
        assert second is not None and second.generation > first.generation
        assert second.ids() == {m.id for m in [*stored[2:], *added]}
        # Rows that stayed are the same objects: nothing was read again for them.
        kept = {row.id: row for row in first.rows}
        assert all(row is kept[row.id] for row in second.rows if row.id in kept)
        query = np.random.default_rng(9).standard_normal(WIDTH).tolist()
        cached = await store.query("acme", query, top_k=30)
        assert cache_of(store).stats.hits == 1
        async with pod(pg_url, cache_mb=0) as uncached:
            assert isinstance(uncached, PostgresVectorStore)  # plain: no snapshots
            assert_same_ranking(cached, await uncached.query("acme", query, top_k=30))


async def test_a_miss_starts_a_refresh_in_the_background(pg_url: str) -> None:
    async with pod(pg_url) as store:
        await fill(store, "acme", 10, seed=10)
        query = np.ones(WIDTH).tolist()
        first = await store.query("acme", query, top_k=5)
        cache = cache_of(store)
        assert cache.stats.misses == 1
        for _ in range(200):
            if cache.stats.refreshes:
                break
            await asyncio.sleep(0.01)
        assert cache.stats.refreshes == 1
        assert_same_ranking(await store.query("acme", query, top_k=5), first)
        assert cache.stats.hits == 1


async def test_writes_by_hand_move_the_generation_too(pg_url: str) -> None:
    async with pod(pg_url) as store:
        stored = await fill(store, "acme", 3, seed=11)
        cache = cache_of(store)
        generations = [await cache.generation("acme")]
        connection = await asyncpg.connect(pg_url)
        try:
            await connection.execute(
                "INSERT INTO memories SELECT tenant_id, id || 'x', embedding, metadata "
                "FROM memories WHERE id = $1",
                stored[0].id,
            )
            generations.append(await cache.generation("acme"))
            await connection.execute(
                "UPDATE memories SET metadata = metadata WHERE id = $1", stored[1].id
            )
            generations.append(await cache.generation("acme"))
            await connection.execute("DELETE FROM memories WHERE id = $1", stored[2].id)
            generations.append(await cache.generation("acme"))
            # A statement that changes nothing leaves it alone.
            await connection.execute("DELETE FROM memories WHERE id = 'absent'")
            generations.append(await cache.generation("acme"))
            await connection.execute("TRUNCATE memories")
            generations.append(await cache.generation("acme"))
        finally:
            await connection.close()
        assert generations == [3, 4, 5, 6, 6, 7]
        assert await cache.generation("never-written") == 0


async def test_a_tenant_larger_than_the_budget_is_not_held_and_still_answers(
    pg_url: str,
) -> None:
    async with pod(pg_url, cache_mb=1) as store:
        await fill(store, "small", 10, seed=12)
        await fill(store, "large", 600, seed=13)  # 600 × (1.5 KB vector + overhead) > 1 MiB
        cache = cache_of(store)
        assert await cache.refresh("small") is not None
        assert await cache.refresh("large") is None
        assert 0 < cache.held_bytes <= 1024 * 1024
        hits = await store.query("large", np.ones(WIDTH).tolist(), top_k=100)
        assert len(hits) == 100 and cache.stats.hits == 0
        # Not retried while its generation stands still.
        assert cache.fresh("large", await cache.generation("large")) is None
        await asyncio.sleep(0.05)
        assert cache.stats.refreshes == 1


async def test_the_least_recently_used_tenant_is_evicted_first(pg_url: str) -> None:
    async with pod(pg_url, cache_mb=1) as store:
        for n, tenant in enumerate(("t1", "t2", "t3")):
            await fill(store, tenant, 200, seed=20 + n)  # ~0.4 MiB each: two fit
        cache = cache_of(store)
        await cache.refresh("t1")
        await cache.refresh("t2")
        assert cache.fresh("t1", await cache.generation("t1")) is not None  # t1 used last
        await cache.refresh("t3")
        assert cache.fresh("t1", await cache.generation("t1")) is not None
        assert cache.fresh("t2", await cache.generation("t2")) is None
        assert cache.held_bytes <= 1024 * 1024


async def test_a_tenant_of_two_widths_is_left_to_sql(pg_url: str) -> None:
    async with pod(pg_url) as store:
        narrow, wide = memory("acme", "old model"), memory("acme", "new model")
        await store.put(narrow, [1.0] * 4)
        await store.put(wide, [1.0] * 8)
        assert await cache_of(store).refresh("acme") is None
        # The SQL scan refuses to compare widths, as it did before there were snapshots.
        with pytest.raises(StorageError, match="different vector dimensions"):
            await store.query("acme", [1.0] * 4, top_k=5)


def test_the_cache_budget_must_be_a_whole_non_negative_number() -> None:
    with pytest.raises(ConfigError, match="PG_SCAN_CACHE_MB"):
        load_config({"DATABASE_URL": "postgres://x/y", "PG_SCAN_CACHE_MB": "-1"})
    assert load_config({"DATABASE_URL": "postgres://x/y"}).postgres.scan_cache_mb == 128


async def test_own_writes_advance_the_snapshot_without_reading_it_again(pg_url: str) -> None:
    async with pod(pg_url) as store:
        await fill(store, "acme", 30, seed=30)
        cache = cache_of(store)
        await cache.refresh("acme")
        target = np.random.default_rng(31).standard_normal(WIDTH).tolist()

        added = memory("acme", "written here")
        await store.put(added, target)
        hits = await store.query("acme", target, top_k=3)
        assert hits[0].memory == added
        await store.delete("acme", [added.id])
        assert added.id not in {hit.memory.id for hit in await store.query("acme", target, top_k=3)}
        # Deleting what is not there changes nothing, the snapshot included.
        await store.delete("acme", [added.id])
        await store.query("acme", target, top_k=3)

        assert (cache.stats.hits, cache.stats.misses, cache.stats.refreshes) == (3, 0, 1)


async def test_an_own_write_after_another_pods_is_not_applied_on_top(pg_url: str) -> None:
    async with pod(pg_url) as mine, pod(pg_url) as theirs:
        await fill(mine, "acme", 10, seed=32)
        cache = cache_of(mine)
        await cache.refresh("acme")
        target = np.random.default_rng(33).standard_normal(WIDTH).tolist()
        foreign = memory("acme", "written by the other pod")
        await theirs.put(foreign, target)
        own = memory("acme", "written here afterwards")
        await mine.put(own, target)
        hits = await mine.query("acme", target, top_k=2)
        # The own write was not carried in on top of a snapshot missing the other pod's: the
        # query caught up through the change log (both rows read), and saw both.
        assert {hit.memory.id for hit in hits} == {foreign.id, own.id}
        held = newest_held(mine, "acme")
        assert held is not None and {foreign.id, own.id} <= held.ids()


async def test_own_writes_that_finish_out_of_order_are_carried_in_in_order(pg_url: str) -> None:
    """Two writes of this process commit as generations g+1 and g+2, but the second reaches
    the cache first: it waits, and both are carried in once the first arrives."""
    async with pod(pg_url) as mine, pod(pg_url) as committer:
        cache, held = await filled_and_held(mine, 20, seed=40)
        rng = np.random.default_rng(41)
        writes = []
        for content in ("committed first", "committed second"):
            written = memory("acme", content)
            vector = rng.standard_normal(WIDTH).astype(np.float32)
            # Committed through another pool, so nothing is carried in yet.
            await committer.put(written, vector.tolist())
            writes.append(
                (written, vector, await cache.generation("acme"), added_row(written, vector))
            )
        (first, first_vector, g1, first_added), (second, _, g2, second_added) = writes
        assert (g1, g2) == (held.generation + 1, held.generation + 2)

        await cache.apply_own_write(
            "acme", g2, removed_ids=frozenset({second.id}), added=second_added
        )
        # The second alone cannot go on top of g: the snapshot stays where it was.
        assert cache.fresh("acme", held.generation) is held
        await cache.apply_own_write(
            "acme", g1, removed_ids=frozenset({first.id}), added=first_added
        )

        carried = cache.fresh("acme", g2)
        assert carried is not None and {first.id, second.id} <= carried.ids()
        hits = await mine.query("acme", first_vector.tolist(), top_k=3)
        assert hits[0].memory == first
        assert (cache.stats.misses, cache.stats.refreshes) == (0, 1)


async def test_a_refresh_carries_in_an_own_write_that_waited_for_it(pg_url: str) -> None:
    """The snapshot is at g; another pod commits g+1, this pod's write g+2 arrives and waits.
    The refresh that reads g+1 carries it in, so the next query needs no refresh of its own."""
    async with pod(pg_url) as mine, pod(pg_url) as other:
        cache, held = await filled_and_held(mine, 10, seed=42)
        rng = np.random.default_rng(43)
        await other.put(memory("acme", "the other pod's"), rng.standard_normal(WIDTH).tolist())
        own = memory("acme", "this pod's, finished while the snapshot was behind")
        vector = rng.standard_normal(WIDTH).astype(np.float32)
        added = added_row(own, vector)
        await cache.apply_own_write(
            "acme", held.generation + 2, removed_ids=frozenset({own.id}), added=added
        )
        assert cache.fresh("acme", held.generation) is held

        refreshed = await cache.refresh("acme")
        # The database catches up with what the cache was told (the write's commit).
        await other.put(own, vector.tolist())
        assert refreshed is not None and refreshed.generation == held.generation + 2
        assert own.id in refreshed.ids() and len(refreshed.rows) == 12
        hits = await mine.query("acme", vector.tolist(), top_k=1)
        assert [hit.memory for hit in hits] == [own]
        assert (cache.stats.misses, cache.stats.refreshes) == (0, 2)


async def test_a_query_waits_for_an_own_write_between_its_commit_and_its_carry_in(
    pg_url: str,
) -> None:
    """Under concurrent writes a query reads a generation that counts a write of this process
    already committed but not yet carried in: it waits for it rather than scanning in SQL."""
    async with pod(pg_url) as mine, pod(pg_url) as committer:
        cache, held = await filled_and_held(mine, 10, seed=44)
        written = memory("acme", "committed, not yet carried in")
        vector = np.random.default_rng(45).standard_normal(WIDTH).astype(np.float32)
        added = added_row(written, vector)
        with cache.own_write("acme"):
            await committer.put(written, vector.tolist())
            committed = await cache.generation("acme")
            query = asyncio.create_task(cache.current("acme", committed))
            await asyncio.sleep(0.05)
            assert not query.done()
            await cache.apply_own_write(
                "acme", committed, removed_ids=frozenset({written.id}), added=added
            )
        answered = await query
        assert answered is not None and written.id in answered.ids()
        assert (cache.stats.hits, cache.stats.misses) == (1, 0)
        # An earlier generation is answered from the later snapshot: it holds a later moment.
        assert cache.fresh("acme", held.generation) is answered


async def test_queries_beside_concurrent_own_writes_never_scan_in_sql(pg_url: str) -> None:
    """What a remember does under load: dedup searches and writes of one process interleave.
    Every query is answered from the snapshot and sees every write committed before it."""
    async with pod(pg_url) as mine:
        cache, _ = await filled_and_held(mine, 30, seed=47)
        rng = np.random.default_rng(48)
        written = [
            (memory("acme", f"concurrent {n}"), rng.standard_normal(WIDTH)) for n in range(24)
        ]

        async def write_then_find(item: tuple[Memory, np.ndarray]) -> None:
            await mine.query("acme", item[1].tolist(), top_k=5)  # the dedup search
            await mine.put(item[0], item[1].tolist())
            hits = await mine.query("acme", item[1].tolist(), top_k=1)
            assert hits[0].memory == item[0]

        await asyncio.gather(*(write_then_find(item) for item in written))
        assert (cache.stats.misses, cache.stats.refreshes) == (0, 1)
        assert cache.stats.hits == 2 * len(written)


async def test_a_query_behind_another_pods_write_does_not_wait_for_later_own_writes(
    pg_url: str,
) -> None:
    async with pod(pg_url) as mine, pod(pg_url) as other:
        await fill(mine, "acme", 10, seed=46)
        cache = cache_of(mine)
        assert await cache.refresh("acme") is not None
        await other.put(memory("acme", "the other pod's"), np.ones(WIDTH).tolist())
        foreign = await cache.generation("acme")
        first, second = cache.own_write("acme"), cache.own_write("acme")
        first.__enter__()
        query = asyncio.create_task(cache.current("acme", foreign))
        await asyncio.sleep(0.05)
        assert not query.done()  # the first write might be what the generation counts
        second.__enter__()
        first.__exit__(None, None, None)  # it was not (its carry-in waits for the other pod's)
        # Begun after the query, the second write is not waited for: the query goes on to the
        # change log's refresh, which brings the other pod's write in, and is answered.
        caught_up = await asyncio.wait_for(query, timeout=1.0)
        second.__exit__(None, None, None)
        assert caught_up is not None and caught_up.generation >= foreign
        assert cache.stats.misses == 0


async def test_a_tenant_first_seen_empty_gets_snapshots_once_it_has_rows(pg_url: str) -> None:
    """An empty tenant's snapshot has no width: the first rows (this pod's or another's) must
    set it, not count as a second width that leaves the tenant to SQL for good."""
    async with pod(pg_url) as mine, pod(pg_url) as theirs:
        target = np.random.default_rng(34).standard_normal(WIDTH).tolist()
        for store in (mine, theirs):
            empty = await cache_of(store).refresh("acme")
            assert empty is not None and empty.rows == ()
        own = memory("acme", "the first memory, written here")
        await mine.put(own, target)
        assert [hit.memory for hit in await mine.query("acme", target, top_k=3)] == [own]
        assert (cache_of(mine).stats.hits, cache_of(mine).stats.skips) == (1, 0)
        # The other pod's empty snapshot is one generation behind: it catches up through the
        # change log (the one row read) and answers from the snapshot.
        assert [hit.memory for hit in await theirs.query("acme", target, top_k=3)] == [own]
        refreshed = newest_held(theirs, "acme")
        assert refreshed is not None and [row.id for row in refreshed.rows] == [own.id]
        assert [hit.memory for hit in await theirs.query("acme", target, top_k=3)] == [own]
        assert (cache_of(theirs).stats.hits, cache_of(theirs).stats.skips) == (2, 0)
