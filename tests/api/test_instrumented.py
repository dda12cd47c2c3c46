"""The latency wrappers: each histogram times its own wrapped call and nothing around it."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY

from services.api.store_deadlines import GuardedObjectStore, GuardedVectorStore
from shared.config import load_config
from shared.model import Memory, new_ulid
from shared.storage import open_stores
from shared.storage.interfaces import GET_MANY_BATCH

WIDTH = 384
EMBEDDING_WAIT_S = 0.3


def storage_seconds(operation: str = "vector_query") -> tuple[float, float]:
    labels = {"operation": operation}
    count = REGISTRY.get_sample_value("mcp_memory_storage_duration_seconds_count", labels)
    total = REGISTRY.get_sample_value("mcp_memory_storage_duration_seconds_sum", labels)
    return count or 0.0, total or 0.0


async def test_a_query_is_timed_from_when_its_vector_is_ready(pg_url: str) -> None:
    config = load_config({"DATABASE_URL": pg_url})
    async with open_stores(config) as stores:
        store = GuardedVectorStore(stores.vectors, timeout_s=5.0)
        fact = Memory(
            id=new_ulid(1_767_225_600_000),
            tenant="acme",
            content="a fact",
            created_at="2026-01-01T00:00:00.000Z",
        )
        await store.put(fact, [1.0] + [0.0] * (WIDTH - 1))
        count_before, seconds_before = storage_seconds()

        async def embedding() -> list[float]:
            await asyncio.sleep(EMBEDDING_WAIT_S)  # the model's time, not the store's
            return [1.0] + [0.0] * (WIDTH - 1)

        hits = await store.query("acme", asyncio.ensure_future(embedding()), top_k=3)
        count_after, seconds_after = storage_seconds()
    assert [hit.memory.id for hit in hits] == [fact.id]
    assert count_after - count_before == 1
    assert 0 < seconds_after - seconds_before < EMBEDDING_WAIT_S


async def test_many_keys_are_read_and_timed_batch_by_batch(pg_url: str) -> None:
    """A fold's backlog may be thousands of shards: each batch of a get_many is one request
    under its own deadline, as each get was, not the whole backlog under one."""
    config = load_config({"DATABASE_URL": pg_url})
    keys = [f"lexicon/acme/shard/{n:05d}" for n in range(2 * GET_MANY_BATCH + 50)]
    async with open_stores(config) as stores:
        store = GuardedObjectStore(stores.objects, timeout_s=5.0)
        await asyncio.gather(*(stores.objects.put(key, key) for key in keys))
        count_before, _ = storage_seconds("object_get_many")
        found = await store.get_many([*keys, "lexicon/acme/shard/gone"])
        count_after, _ = storage_seconds("object_get_many")
    assert {key: stored.body for key, stored in found.items()} == {key: key for key in keys}
    assert count_after - count_before == 3
