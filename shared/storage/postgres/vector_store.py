"""Memories and their embeddings in the ``memories`` table (what S3 Vectors holds).

A query is an exact scan of the tenant's rows either way: from a snapshot of them in this
process when one is at the tenant's current generation (see ``scan``), otherwise in SQL.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from shared.errors import InvalidInputError
from shared.model import Hit, Memory
from shared.storage.codec import check_budget, from_metadata, to_metadata, vector_key
from shared.storage.interfaces import MemoryRef, VectorStore
from shared.storage.postgres._datastore import STORE_NAME, PostgresDatastore
from shared.storage.postgres.scan import GENERATION_SQL, ScanCache
from shared.tasks import abandon

# The same page cap S3 Vectors' QueryVectors has, so both backends answer the same question.
MAX_TOP_K: Final = 100

_PUT_SQL: Final = """
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
_DELETE_SQL: Final = "DELETE FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])"
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


class PostgresVectorStore(VectorStore):
    """VectorStore over pgvector, storing exactly the metadata the S3 Vectors store writes."""

    display_name = STORE_NAME
    scan_cache: ScanCache | None

    def __init__(self, datastore: PostgresDatastore, *, scan_cache_bytes: int = 0) -> None:
        """``scan_cache_bytes`` bounds the tenant snapshots kept for queries; 0 scans in SQL
        every time."""
        self._datastore = datastore
        self.scan_cache = (
            ScanCache(datastore, budget_bytes=scan_cache_bytes, rebuild=_rebuild)
            if scan_cache_bytes > 0
            else None
        )

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        metadata = to_metadata(memory)
        check_budget(metadata)
        vector = as_vector(embedding)
        if self.scan_cache is None:
            await self._datastore.execute(_PUT_SQL, memory.tenant, memory.id, vector, metadata)
            return
        with self.scan_cache.own_write(memory.tenant):
            generation = await self._write_then_read_generation(
                memory.tenant, _PUT_SQL, memory.tenant, memory.id, vector, metadata
            )
            await self.scan_cache.apply_own_write(
                memory.tenant,
                generation,
                # An overwrite of the same id (never done by the service) replaces the row.
                removed_ids=frozenset({memory.id}),
                added=(memory.id, vector, metadata, len(msgspec.json.encode(metadata))),
            )

    async def query(self, tenant: str, embedding: Sequence[float], *, top_k: int) -> list[Hit]:
        top_k = _checked_top_k(top_k)
        vector = as_vector(embedding)
        if self.scan_cache is None:
            return await self._scan_in_sql(tenant, vector, top_k)
        generation = await self.scan_cache.generation(tenant)
        return await self._scan(self.scan_cache, tenant, vector, top_k, generation)

    async def query_after(
        self, tenant: str, embedding: Awaitable[Sequence[float]], *, top_k: int
    ) -> list[Hit]:
        top_k = _checked_top_k(top_k)
        if self.scan_cache is None:
            return await self._scan_in_sql(tenant, as_vector(await embedding), top_k)
        # The generation does not depend on the vector: one round trip (about 1 ms under load)
        # taken while the model runs rather than after it. A write committed before this call
        # is still seen, because the read starts after it.
        generation = asyncio.ensure_future(self.scan_cache.generation(tenant))
        try:
            vector = as_vector(await embedding)
        except BaseException:
            abandon(generation)
            raise
        return await self._scan(self.scan_cache, tenant, vector, top_k, await generation)

    async def _scan(
        self,
        cache: ScanCache,
        tenant: str,
        vector: npt.NDArray[np.float32],
        top_k: int,
        generation: int,
    ) -> list[Hit]:
        """From the tenant's snapshot when it is at ``generation`` or later (see
        ``ScanCache.current``), otherwise in SQL."""
        snapshot = await cache.current(tenant, generation)
        if snapshot is not None and snapshot.width == vector.size and vector.any():
            return snapshot.nearest(vector, top_k, workers=cache.workers)
        return await self._scan_in_sql(tenant, vector, top_k)

    async def _scan_in_sql(
        self, tenant: str, vector: npt.NDArray[np.float32], top_k: int
    ) -> list[Hit]:
        rows = await self._datastore.fetch(_QUERY_SQL, tenant, vector, top_k)
        hits: list[Hit] = []
        for row in rows:
            memory = _rebuild(tenant, row["id"], row["metadata"])
            if memory is not None:
                hits.append(Hit(memory=memory, similarity=_similarity(row["distance"])))
        return hits

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        rows = await self._datastore.fetch(_GET_SQL, tenant, list(ids))
        memories = (_rebuild(tenant, row["id"], row["metadata"]) for row in rows)
        return [memory for memory in memories if memory is not None]

    async def get_for_recall(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """From the tenant's snapshot, which a query of this recall just proved current (or was
        refreshed from); only ids it lacks are read in SQL. Saves recall a round trip."""
        snapshot = self.scan_cache.held(tenant) if self.scan_cache is not None else None
        if snapshot is None:
            return await self.get(tenant, ids)
        found = [m for m in map(snapshot.memory_of, ids) if m is not None]
        missing = [i for i in ids if snapshot.memory_of(i) is None]
        return found + (await self.get(tenant, missing) if missing else [])

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        if self.scan_cache is None:
            await self._datastore.execute(_DELETE_SQL, tenant, list(ids))
            return
        with self.scan_cache.own_write(tenant):
            generation = await self._write_then_read_generation(
                tenant, _DELETE_SQL, tenant, list(ids)
            )
            await self.scan_cache.apply_own_write(tenant, generation, removed_ids=frozenset(ids))

    async def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        after = ("", "")
        while True:
            rows = await self._datastore.fetch(_SCAN_IDS_SQL, *after, SCAN_PAGE_ROWS)
            if rows:
                yield [MemoryRef(row["tenant_id"], row["id"]) for row in rows]
                after = (rows[-1]["tenant_id"], rows[-1]["id"])
            if len(rows) < SCAN_PAGE_ROWS:
                return

    async def housekeeping(self) -> int:
        """Prune the change log's rows older than ``CHANGE_LOG_RETENTION_S``; how many. A
        snapshot older than that is brought forward by a full read (the log then has a gap)."""
        status = await self._datastore.execute(_PRUNE_CHANGES_SQL, CHANGE_LOG_RETENTION_S)
        return int(status.rsplit(" ", 1)[-1]) if status and status.startswith("DELETE") else 0

    async def _write_then_read_generation(self, tenant: str, sql: str, *args: object) -> int:
        """Run one write and read the tenant's generation in the same transaction: the trigger
        holds the generation row's lock until commit, so the value read is this write's."""
        async with self._datastore.session() as session, session.transaction():
            await session.execute(sql, *args)
            value = await session.fetchval(GENERATION_SQL, tenant)
        return int(value) if value is not None else 0

    async def close(self) -> None:
        """Stop background snapshot reads; call before the pool closes."""
        if self.scan_cache is not None:
            await self.scan_cache.close()


CHANGE_LOG_RETENTION_S: Final = 3600.0
_PRUNE_CHANGES_SQL: Final = (
    "DELETE FROM memory_changes WHERE changed_at < now() - make_interval(secs => $1)"
)


def _checked_top_k(top_k: int) -> int:
    if top_k < 1:
        raise InvalidInputError("top_k", f"top_k must be at least 1, got {top_k}")
    return min(top_k, MAX_TOP_K)


def _similarity(distance: object) -> float:
    # A zero vector has no direction: pgvector answers NaN, which must not outrank real hits.
    if not isinstance(distance, int | float) or not math.isfinite(distance):
        return 0.0
    return 1.0 - float(distance)


def _rebuild(tenant: str, memory_id: str, metadata: Any) -> Memory | None:
    if not isinstance(metadata, dict):
        return None
    owner = metadata.get("tenantId")
    memory = from_metadata(vector_key(str(owner), memory_id), metadata)
    # The tenant filter is the isolation boundary: re-check it on what came back.
    if memory is None or memory.tenant != tenant:
        return None
    return memory
