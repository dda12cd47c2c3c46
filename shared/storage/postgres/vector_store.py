"""Memories and their embeddings in the ``memories`` table (what S3 Vectors holds).

A query is an exact scan of the tenant's rows in SQL. The factory composes this store inside
``scan.SnapshotVectorStore``, which answers from an in-process snapshot of the tenant when one
is at its current generation; the statements and checks here serve both.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from shared.errors import InvalidInputError
from shared.model import Hit, Memory
from shared.storage.codec import checked_metadata, from_metadata, vector_key
from shared.storage.interfaces import Embedding, MemoryRef, VectorStore, ready
from shared.storage.postgres._datastore import STORE_NAME, PostgresDatastore

# The same page cap S3 Vectors' QueryVectors has, so both backends answer the same question.
MAX_TOP_K: Final = 100

PUT_SQL: Final = """
INSERT INTO memories (tenant_id, id, embedding, metadata) VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant_id, id) DO UPDATE SET embedding = EXCLUDED.embedding,
                                          metadata = EXCLUDED.metadata
"""
# An exact scan of one tenant's rows: no vector index, so the nearest neighbour is never missed.
_QUERY_SQL: Final = """
SELECT id, metadata, embedding <=> $2::vector AS distance
FROM memories WHERE tenant_id = $1
ORDER BY embedding <=> $2::vector LIMIT $3
"""
_GET_SQL: Final = "SELECT id, metadata FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])"
DELETE_SQL: Final = "DELETE FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])"
# Keyset pages along the primary key: each page is one index range scan, however deep.
_SCAN_IDS_SQL: Final = """
SELECT tenant_id, id FROM memories WHERE (tenant_id, id) > ($1, $2)
ORDER BY tenant_id, id LIMIT $3
"""
SCAN_PAGE_ROWS: Final = 5000


def as_vector(embedding: Sequence[float]) -> npt.NDArray[np.float32]:
    """The embedding as pgvector's binary codec takes it; refuses what no index can hold."""
    vector = np.asarray(embedding, dtype=np.float32)
    if vector.ndim != 1 or vector.size == 0:
        raise InvalidInputError("embedding", "embedding must be a non-empty list of numbers")
    if not np.isfinite(vector).all():
        raise InvalidInputError("embedding", "embedding must contain only finite numbers")
    return vector


def row_of(
    memory: Memory, embedding: Sequence[float]
) -> tuple[npt.NDArray[np.float32], dict[str, Any]]:
    """What ``PUT_SQL`` stores for ``memory``: its vector and its metadata, both checked."""
    metadata = checked_metadata(memory)  # refused first, as on S3 Vectors
    return as_vector(embedding), metadata


class PostgresVectorStore(VectorStore):
    """VectorStore over pgvector, storing exactly the metadata the S3 Vectors store writes."""

    display_name = STORE_NAME

    def __init__(self, datastore: PostgresDatastore) -> None:
        self._datastore = datastore

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        vector, metadata = row_of(memory, embedding)
        await self._datastore.execute(PUT_SQL, memory.tenant, memory.id, vector, metadata)

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        top_k = checked_top_k(top_k)
        return await self.scan_in_sql(tenant, as_vector(await ready(embedding)), top_k)

    async def scan_in_sql(
        self, tenant: str, vector: npt.NDArray[np.float32], top_k: int
    ) -> list[Hit]:
        rows = await self._datastore.fetch(_QUERY_SQL, tenant, vector, top_k)
        hits: list[Hit] = []
        for row in rows:
            memory = rebuild(tenant, row["id"], row["metadata"])
            if memory is not None:
                hits.append(Hit(memory=memory, similarity=_similarity(row["distance"])))
        return hits

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        rows = await self._datastore.fetch(_GET_SQL, tenant, list(ids))
        memories = (rebuild(tenant, row["id"], row["metadata"]) for row in rows)
        return [memory for memory in memories if memory is not None]

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if ids:
            await self._datastore.execute(DELETE_SQL, tenant, list(ids))

    async def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        after = ("", "")
        while True:
            rows = await self._datastore.fetch(_SCAN_IDS_SQL, *after, SCAN_PAGE_ROWS)
            if rows:
                yield [MemoryRef(row["tenant_id"], row["id"]) for row in rows]
                after = (rows[-1]["tenant_id"], rows[-1]["id"])
            if len(rows) < SCAN_PAGE_ROWS:
                return


def checked_top_k(top_k: int) -> int:
    if top_k < 1:
        raise InvalidInputError("top_k", f"top_k must be at least 1, got {top_k}")
    return min(top_k, MAX_TOP_K)


def _similarity(distance: object) -> float:
    # A zero vector has no direction: pgvector answers NaN, which must not outrank real hits.
    if not isinstance(distance, int | float) or not math.isfinite(distance):
        return 0.0
    return 1.0 - float(distance)


def rebuild(tenant: str, memory_id: str, metadata: Any) -> Memory | None:
    if not isinstance(metadata, dict):
        return None
    owner = metadata.get("tenantId")
    memory = from_metadata(vector_key(str(owner), memory_id), metadata)
    # The tenant filter is the isolation boundary: re-check it on what came back.
    if memory is None or memory.tenant != tenant:
        return None
    return memory
