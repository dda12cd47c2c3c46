"""The vector column has no width: different models' vectors store side by side."""

from __future__ import annotations

import pytest

from shared.config import load_config
from shared.errors import StorageError
from shared.model import Memory, new_ulid
from shared.storage import open_stores


def _unit(dim: int, hot: int) -> list[float]:
    return [1.0 if i == hot else 0.0 for i in range(dim)]


async def test_widths_384_and_1536_both_store_and_each_is_queryable(pg_url: str) -> None:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as stores:
        small = Memory(id=new_ulid(1), tenant="minilm", content="384", created_at="x")
        large = Memory(id=new_ulid(1), tenant="openai", content="1536", created_at="x")
        await stores.vectors.put(small, _unit(384, 3))
        await stores.vectors.put(large, _unit(1536, 1000))

        small_hits = await stores.vectors.query("minilm", _unit(384, 3), top_k=5)
        large_hits = await stores.vectors.query("openai", _unit(1536, 1000), top_k=5)
        assert [(h.memory.content, round(h.similarity, 4)) for h in small_hits] == [("384", 1.0)]
        assert [(h.memory.content, round(h.similarity, 4)) for h in large_hits] == [("1536", 1.0)]

        # pgvector refuses to compare two widths; that surfaces as a storage error, not a crash.
        with pytest.raises(StorageError, match="different vector dimensions 1536 and 384"):
            await stores.vectors.query("openai", _unit(384, 3), top_k=5)


async def test_a_zero_query_vector_scores_zero_instead_of_nan(pg_url: str) -> None:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as stores:
        stored = Memory(id=new_ulid(1), tenant="t", content="c", created_at="x")
        await stores.vectors.put(stored, _unit(8, 0))
        hits = await stores.vectors.query("t", [0.0] * 8, top_k=5)
        assert [(h.memory.id, h.similarity) for h in hits] == [(stored.id, 0.0)]
