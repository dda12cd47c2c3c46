"""The latency wrappers: each histogram times its own wrapped call and nothing around it."""

from __future__ import annotations

import asyncio

from prometheus_client import REGISTRY

from services.api.store_deadlines import GuardedVectorStore
from shared.config import load_config
from shared.model import Memory, new_ulid
from shared.storage import open_stores

WIDTH = 384
EMBEDDING_WAIT_S = 0.3


def vector_query_seconds() -> tuple[float, float]:
    labels = {"operation": "vector_query"}
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
        count_before, seconds_before = vector_query_seconds()

        async def embedding() -> list[float]:
            await asyncio.sleep(EMBEDDING_WAIT_S)  # the model's time, not the store's
            return [1.0] + [0.0] * (WIDTH - 1)

        hits = await store.query("acme", asyncio.ensure_future(embedding()), top_k=3)
        count_after, seconds_after = vector_query_seconds()
    assert [hit.memory.id for hit in hits] == [fact.id]
    assert count_after - count_before == 1
    assert 0 < seconds_after - seconds_before < EMBEDDING_WAIT_S
