"""The VectorStore contract, run against every backend (see conftest.BACKENDS)."""

from __future__ import annotations

import asyncio
import math

import pytest

from shared.errors import BudgetError, EmbeddingError, InvalidInputError
from shared.model import Memory, new_ulid
from shared.storage import VectorStore
from shared.storage.postgres import vector_store as pg_vector_store
from shared.storage.s3 import vector_store as s3_vector_store

NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def memory(tenant: str, content: str = "a fact", **fields: object) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS),
        tenant=tenant,
        content=content,
        created_at="2026-01-01T00:00:00.000Z",
        **fields,  # type: ignore[arg-type]
    )


def axis(dim: int, *weights: float) -> list[float]:
    """A unit vector whose first components are proportional to ``weights``."""
    norm = math.sqrt(sum(w * w for w in weights))
    return [w / norm for w in weights] + [0.0] * (dim - len(weights))


async def test_put_then_get_returns_every_field(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    stored = memory(
        "acme",
        "deploys go through the blue pool",
        memory_type="pattern",
        category="ops",
        tags=("deploy", "blue"),
        scope="conversation",
        conversation="chat:42",
        trust_base=0.75,
    )
    await vector_store.put(stored, axis(embedding_dim, 1))
    assert await vector_store.get("acme", [stored.id]) == [stored]


async def test_get_drops_missing_ids_and_an_empty_list_asks_nothing(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    kept = memory("acme")
    await vector_store.put(kept, axis(embedding_dim, 1))
    assert await vector_store.get("acme", [kept.id, new_ulid(NOW_MS)]) == [kept]
    assert await vector_store.get("acme", []) == []


async def test_similarity_is_one_minus_cosine_distance(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    same, diagonal, orthogonal = memory("acme"), memory("acme"), memory("acme")
    await vector_store.put(same, axis(embedding_dim, 1))
    await vector_store.put(diagonal, axis(embedding_dim, 1, 1))
    await vector_store.put(orthogonal, axis(embedding_dim, 0, 1))
    hits = await vector_store.query("acme", axis(embedding_dim, 1), top_k=10)
    similarity = {hit.memory.id: hit.similarity for hit in hits}
    assert similarity == {
        same.id: pytest.approx(1.0, abs=1e-4),
        diagonal.id: pytest.approx(1 / math.sqrt(2), abs=1e-4),
        orthogonal.id: pytest.approx(0.0, abs=1e-4),
    }


async def fan(vector_store: VectorStore, embedding_dim: int) -> list[Memory]:
    """Five memories whose angle to the first axis grows with their index, so the first three
    are the three nearest to it."""
    memories = [memory("acme", f"fact {n}") for n in range(5)]
    for n, stored in enumerate(memories):
        await vector_store.put(stored, axis(embedding_dim, 1, n * 0.5))
    return memories


async def test_query_returns_the_top_k_nearest(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    memories = await fan(vector_store, embedding_dim)
    hits = await vector_store.query("acme", axis(embedding_dim, 1), top_k=3)
    assert {hit.memory.id for hit in hits} == {m.id for m in memories[:3]}


async def test_query_takes_a_vector_still_being_computed_and_answers_the_same(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    memories = await fan(vector_store, embedding_dim)
    arrived = asyncio.Event()

    async def embedding() -> list[float]:
        await asyncio.sleep(0.05)  # a model still running when the query starts
        arrived.set()
        return axis(embedding_dim, 1)

    hits = await vector_store.query("acme", asyncio.ensure_future(embedding()), top_k=3)
    assert arrived.is_set()
    again = await vector_store.query("acme", axis(embedding_dim, 1), top_k=3)
    # On PostgreSQL the first query of a tenant may be answered in SQL while its snapshot is
    # built, and the second from the snapshot, which computes in float32: the same memories in
    # the same order, each similarity within float32's rounding.
    assert [hit.memory for hit in hits] == [hit.memory for hit in again]
    for first, second in zip(hits, again, strict=True):
        assert first.similarity == pytest.approx(second.similarity, abs=1e-5)
    assert {hit.memory.id for hit in hits} == {m.id for m in memories[:3]}


async def test_query_passes_on_a_failed_embedding(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    await vector_store.put(memory("acme"), axis(embedding_dim, 1))

    async def embedding() -> list[float]:
        await asyncio.sleep(0.01)
        raise EmbeddingError("the model is gone")

    with pytest.raises(EmbeddingError, match="the model is gone"):
        await vector_store.query("acme", asyncio.ensure_future(embedding()), top_k=3)


async def test_query_refuses_top_k_below_one(vector_store: VectorStore, embedding_dim: int) -> None:
    with pytest.raises(InvalidInputError, match="top_k must be at least 1") as info:
        await vector_store.query("acme", axis(embedding_dim, 1), top_k=0)
    assert info.value.field == "top_k"


async def test_tenants_are_isolated_in_query_get_and_delete(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    ours, theirs = memory("acme", "ours"), memory("globex", "theirs")
    same_id_theirs = Memory(
        id=ours.id, tenant="globex", content="same id", created_at=ours.created_at
    )
    vector = axis(embedding_dim, 1)
    for stored in (ours, theirs, same_id_theirs):
        await vector_store.put(stored, vector)

    hits = await vector_store.query("acme", vector, top_k=10)
    assert [hit.memory for hit in hits] == [ours]
    assert await vector_store.get("acme", [theirs.id]) == []
    assert await vector_store.get("acme", [ours.id]) == [ours]

    await vector_store.delete("acme", [theirs.id, ours.id])
    assert await vector_store.get("acme", [ours.id]) == []
    survivors = await vector_store.get("globex", [theirs.id, ours.id])
    assert sorted(m.content for m in survivors) == ["same id", "theirs"]


async def test_delete_removes_only_the_named_ids(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    gone, kept = memory("acme"), memory("acme")
    for stored in (gone, kept):
        await vector_store.put(stored, axis(embedding_dim, 1))
    await vector_store.delete("acme", [gone.id, new_ulid(NOW_MS)])
    await vector_store.delete("acme", [])
    hits = await vector_store.query("acme", axis(embedding_dim, 1), top_k=10)
    assert [hit.memory.id for hit in hits] == [kept.id]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"content": "x" * 32_001}, "content is 32001 bytes; the limit is 32000"),
        ({"content": "é" * 16_001}, "content is 32002 bytes"),
        ({"category": "c" * 2_000}, "shorten the category"),
        (
            {"content": "x" * 30_000, "tags": tuple("t" * 1_000 for _ in range(12))},
            "shorten the tags",
        ),
        # JSON escaping counts: 20,001 quote characters pass the content check but double in JSON.
        ({"content": '"' * 20_001}, "shorten the tags or store a shorter fact"),
    ],
    ids=["content", "content-utf8", "category", "tags", "escaped-content"],
)
async def test_over_budget_is_refused_naming_the_field_and_nothing_is_stored(
    vector_store: VectorStore, embedding_dim: int, fields: dict[str, object], named: str
) -> None:
    refused = memory("acme", **fields)  # type: ignore[arg-type]  # each case names its own field
    with pytest.raises(BudgetError, match=named):
        await vector_store.put(refused, axis(embedding_dim, 1))
    assert await vector_store.get("acme", [refused.id]) == []
    assert await vector_store.query("acme", axis(embedding_dim, 1), top_k=10) == []


async def test_content_exactly_at_the_budget_is_stored(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    stored = memory("acme", "x" * 32_000)
    await vector_store.put(stored, axis(embedding_dim, 1))
    assert await vector_store.get("acme", [stored.id]) == [stored]


async def test_scan_ids_pages_through_every_tenant_and_nothing_deleted(
    vector_store: VectorStore, embedding_dim: int
) -> None:
    kept = [memory("acme", f"fact {n}") for n in range(3)] + [memory("other.tenant-2", "x")]
    gone = memory("acme", "forgotten")
    for stored in [*kept, gone]:
        await vector_store.put(stored, axis(embedding_dim, 1))
    await vector_store.delete("acme", [gone.id])
    pages = [page async for page in vector_store.scan_ids()]
    assert all(pages), "no empty page is yielded"
    found = sorted((ref.tenant, ref.memory_id) for page in pages for ref in page)
    assert found == sorted((m.tenant, m.id) for m in kept)


async def test_scan_ids_of_an_empty_store_yields_nothing(vector_store: VectorStore) -> None:
    assert [page async for page in vector_store.scan_ids()] == []


async def test_scan_ids_follows_pages_to_the_end(
    vector_store: VectorStore, embedding_dim: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of two, whichever backend runs: five memories take three pages, the last short.
    monkeypatch.setattr(pg_vector_store, "SCAN_PAGE_ROWS", 2)
    monkeypatch.setattr(s3_vector_store, "LIST_PAGE", 2)
    stored = [memory("acme", f"fact {n}") for n in range(5)]
    for one in stored:
        await vector_store.put(one, axis(embedding_dim, 1))
    pages = [page async for page in vector_store.scan_ids()]
    assert [len(page) for page in pages] == [2, 2, 1]
    assert sorted(ref.memory_id for page in pages for ref in page) == sorted(m.id for m in stored)
