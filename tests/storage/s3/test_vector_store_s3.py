"""S3VectorsStore behaviour specific to S3 Vectors: batching, the top-K ceiling, the tenant filter,
the budget checked before sending, and AWS refusals turned into StorageError."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from shared.config import load_config
from shared.errors import BudgetError, StorageError
from shared.model import Memory, iso_ms, new_ulid
from shared.storage import Stores, open_stores
from shared.storage.s3.vector_store import _similarity
from tests.fakes.aws import TEST_DIM, MakeS3Environ
from tests.fakes.s3vectors_server import S3VectorsFake

NOW_MS = 1_790_000_000_000


def _memory(tenant: str, n: int, **fields: object) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS + n),
        tenant=tenant,
        content=f"fact number {n}",
        created_at=iso_ms(NOW_MS + n),
        **fields,  # type: ignore[arg-type]
    )


def _unit(n: int) -> list[float]:
    vector = [0.01] * TEST_DIM
    vector[n % TEST_DIM] = 1.0
    return vector


@pytest.fixture
async def stores(make_s3_environ: MakeS3Environ) -> AsyncIterator[Stores]:
    async with open_stores(load_config(await make_s3_environ())) as opened:
        yield opened


async def _put_all(stores: Stores, memories: list[Memory]) -> None:
    gate = asyncio.Semaphore(16)

    async def put(i: int, memory: Memory) -> None:
        async with gate:
            await stores.vectors.put(memory, _unit(i))

    await asyncio.gather(*(put(i, m) for i, m in enumerate(memories)))


async def test_get_of_250_ids_is_three_get_vectors_calls(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    memories = [_memory("t", n) for n in range(250)]
    await _put_all(stores, memories)
    s3vectors_fake.calls.clear()

    found = await stores.vectors.get("t", [m.id for m in memories])

    assert s3vectors_fake.calls["GetVectors"] == 3
    assert sorted(m.id for m in found) == sorted(m.id for m in memories)


async def test_query_asks_for_at_most_100_and_only_this_tenant(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    await _put_all(stores, [_memory("t", n) for n in range(120)])
    await stores.vectors.put(_memory("other", 999), _unit(3))

    hits = await stores.vectors.query("t", _unit(3), top_k=500)

    assert len(hits) == 100
    assert {hit.memory.tenant for hit in hits} == {"t"}
    best = max(hits, key=lambda hit: hit.similarity)
    assert best.similarity == pytest.approx(1.0, abs=1e-6)
    assert best.memory.content in {f"fact number {n}" for n in (3, 67)}


async def test_delete_of_1200_ids_is_three_delete_vectors_calls(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    kept, gone = _memory("t", 1), _memory("t", 2)
    await _put_all(stores, [kept, gone])
    s3vectors_fake.calls.clear()

    await stores.vectors.delete("t", [gone.id, *(f"missing-{n}" for n in range(1199))])

    assert s3vectors_fake.calls["DeleteVectors"] == 3
    assert [m.id for m in await stores.vectors.get("t", [kept.id, gone.id])] == [kept.id]


async def test_empty_get_and_delete_send_nothing(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    assert await stores.vectors.get("t", []) == []
    await stores.vectors.delete("t", [])
    assert s3vectors_fake.calls["GetVectors"] == s3vectors_fake.calls["DeleteVectors"] == 0


async def test_over_budget_is_refused_before_anything_is_sent(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    memory = Memory(
        id=new_ulid(NOW_MS), tenant="t", content="x" * 32_001, created_at=iso_ms(NOW_MS)
    )
    with pytest.raises(BudgetError, match="content"):
        await stores.vectors.put(memory, _unit(0))
    assert s3vectors_fake.calls["PutVectors"] == 0


async def test_a_refusal_from_s3_vectors_is_a_storage_error_naming_operation_and_code(
    stores: Stores,
) -> None:
    with pytest.raises(StorageError) as raised:
        await stores.vectors.put(_memory("t", 1), [0.5] * (TEST_DIM + 1))
    message = str(raised.value)
    assert "PutVectors" in message and "ValidationException" in message
    assert "dimension" in message


async def test_a_memory_of_another_tenant_is_dropped_even_if_the_service_returns_it(
    stores: Stores, s3vectors_fake: S3VectorsFake
) -> None:
    victim = _memory("a", 1)
    await stores.vectors.put(victim, _unit(1))
    await stores.vectors.put(_memory("b", 2), _unit(1))
    # Rewrite the stored tenant of "a"'s vector: the key still says "a", so GetVectors finds it,
    # and with the filter ignored QueryVectors returns "b"'s too — only the re-check can drop them.
    index = list(s3vectors_fake.buckets.values())[-1]["memories"]  # this test's bucket
    data, metadata = index.vectors[f"a#{victim.id}"]
    index.vectors[f"a#{victim.id}"] = (data, {**metadata, "tenantId": "b"})
    s3vectors_fake.ignore_filter = True

    assert await stores.vectors.query("a", _unit(1), top_k=5) == []
    assert await stores.vectors.get("a", [victim.id]) == []


async def test_round_trip_keeps_every_field(stores: Stores) -> None:
    memory = _memory(
        "t",
        5,
        memory_type="pattern",
        category="convention",
        tags=("git", "ci"),
        scope="conversation",
        conversation="chat:42",
        trust_base=0.75,
    )
    await stores.vectors.put(memory, _unit(5))
    (hit,) = await stores.vectors.query("t", _unit(5), top_k=1)
    assert hit.memory == memory
    assert await stores.vectors.get("t", [memory.id]) == [memory]


@pytest.mark.parametrize(
    ("distance", "similarity"),
    [(0.25, 0.75), (0, 1.0), (1.5, -0.5), (None, 0.0), ("0.1", 0.0), (float("nan"), 0.0)],
)
def test_similarity_is_one_minus_distance_and_missing_counts_as_distance_one(
    distance: object, similarity: float
) -> None:
    assert _similarity(distance) == pytest.approx(similarity)
