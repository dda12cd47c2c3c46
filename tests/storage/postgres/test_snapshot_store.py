"""The factory composes the PostgreSQL vector store inside its snapshots, and recall reads
through them: the same answers as the plain store, with no read for a keyword-only hit's body.
With ``PG_SCAN_CACHE_MB=0`` the plain store stands alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest

from shared.config import load_config
from shared.embedding import Embedder
from shared.model import Draft, Memory
from shared.operations import OperationsContext
from shared.operations.recall import recall
from shared.operations.remember import remember
from shared.storage import Stores, open_stores
from shared.storage.postgres import PostgresVectorStore
from shared.storage.postgres.scan import SnapshotVectorStore
from tests.operations.conftest import memory_service
from tests.storage.postgres.test_scan_cache import WIDTH, memory

NEEDLE = "The ZX-4471 relay sits in the red cabinet on the third floor."
QUERY = "ZX-4471"
FILLERS = 120


class PlacedEmbedder(Embedder):
    """Vectors placed by the test: the query on the first axis, the needle opposite it (the
    farthest memory, outside the vector leg's hundred), every other text near the query."""

    model = "placed"
    dim = WIDTH

    async def embed(self, text: str) -> list[float]:
        axis = np.zeros(WIDTH)
        axis[0] = 1.0
        if text == QUERY:
            return list(axis)
        if text == NEEDLE:
            return list(-axis)
        seed = int.from_bytes(text.encode()[-8:].rjust(8, b"\0"), "little")
        spread = np.random.default_rng(seed).standard_normal(WIDTH)
        return list(axis + 0.8 * spread / np.linalg.norm(spread))


@contextlib.asynccontextmanager
async def service_on(pg_url: str, cache_mb: int) -> AsyncIterator[tuple[OperationsContext, Stores]]:
    """An OperationsContext wired as the API wires it, on stores the factory opened."""
    config = load_config({"DATABASE_URL": pg_url, "PG_SCAN_CACHE_MB": str(cache_mb)})
    async with open_stores(config) as stores:
        yield memory_service(stores, PlacedEmbedder()), stores


def counting_gets(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> list[Sequence[str]]:
    """The ids of every read of memories by id that reaches SQL, in order."""
    vectors = stores.vectors
    plain = vectors.store if isinstance(vectors, SnapshotVectorStore) else vectors
    assert isinstance(plain, PostgresVectorStore)
    calls: list[Sequence[str]] = []
    get = plain.get

    async def counted(tenant: str, ids: Sequence[str]) -> list[Memory]:
        calls.append(list(ids))
        return await get(tenant, ids)

    monkeypatch.setattr(plain, "get", counted)
    return calls


async def remember_all(ops: OperationsContext) -> Memory:
    for n in range(FILLERS):
        await remember(
            ops,
            "acme",
            None,
            Draft(
                content=f"Filler note {n} about routine maintenance of building {n}.",
                memory_type="project",
                category=None,
                tags=(),
                scope="project",
            ),
        )
    stored = await remember(
        ops,
        "acme",
        None,
        Draft(
            content=NEEDLE,
            memory_type="project",
            category=None,
            tags=(),
            scope="project",
        ),
    )
    return stored.memory


async def test_the_factory_composes_the_snapshots_around_the_plain_store(pg_url: str) -> None:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as stores:
        assert isinstance(stores.vectors, SnapshotVectorStore)
        assert type(stores.vectors.store) is PostgresVectorStore
        assert stores.snapshots is stores.vectors.snapshots
        assert stores.housekeeping is not None


async def test_with_no_budget_the_plain_store_stands_alone(pg_url: str) -> None:
    config = load_config({"DATABASE_URL": pg_url, "PG_SCAN_CACHE_MB": "0"})
    async with open_stores(config) as stores:
        vectors = stores.vectors
        assert type(vectors) is PostgresVectorStore and stores.snapshots is None
        kept, gone = memory("acme", "kept"), memory("acme", "gone")
        await vectors.put(kept, [1.0] + [0.0] * (WIDTH - 1))
        await vectors.put(gone, [0.0, 1.0] + [0.0] * (WIDTH - 2))
        await vectors.delete("acme", [gone.id])
        pending = asyncio.ensure_future(asyncio.sleep(0.01, [1.0] + [0.0] * (WIDTH - 1)))
        hits = await vectors.query("acme", pending, top_k=5)
        assert [hit.memory for hit in hits] == [kept]
        assert await vectors.get("acme", [kept.id, gone.id]) == [kept]


async def test_recall_reads_through_the_snapshots_and_answers_as_the_plain_store(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {}
    for cache_mb in (0, 64):
        async with service_on(pg_url, cache_mb) as (ops, stores):
            if cache_mb == 0:
                needle = await remember_all(ops)
            else:
                assert isinstance(stores.vectors, SnapshotVectorStore)
                assert await stores.vectors.snapshots.refresh("acme") is not None
            await ops.lexicon.query("acme", QUERY)  # loaded (a first load reads bodies)
            gets = counting_gets(stores, monkeypatch)
            answer = await recall(
                ops, "acme", None, query=QUERY, mode="balanced", limit=5, count_use=False
            )
            assert answer.outcome is not None
            answers[cache_mb] = [(r.memory, r.confidence) for r in answer.outcome.results]
            # The needle, first by its name, is no vector hit (it is the farthest memory).
            assert answers[cache_mb][0][0] == needle
            if stores.snapshots is None:
                assert gets == [[needle.id]]  # its body read in SQL
            else:
                # The query was answered from the snapshot, and the body came from it.
                assert stores.snapshots.stats.hits == 1
                assert gets == []
    assert answers[64] == answers[0]
