"""The PostgreSQL vector store with its snapshots: what the factory opens unless
``PG_SCAN_CACHE_MB`` is 0.

A query reads the tenant's generation (one primary-key read, taken while the vector is still
being computed) and answers from the tenant's snapshot when it is at that generation or later
(see ``ScanCache.current``), otherwise in SQL through the plain store. This process's writes
read their generation in their own transaction and are carried into the snapshot at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Sequence

import msgspec
import numpy as np
import numpy.typing as npt

from shared.model import Hit, Memory
from shared.process.tasks import abandon
from shared.storage.interfaces import Embedding, MemoryRef, VectorStore
from shared.storage.postgres._datastore import STORE_NAME
from shared.storage.postgres.scan.cache import ScanCache
from shared.storage.postgres.vector_store import (
    DELETE_SQL,
    PUT_SQL,
    PostgresVectorStore,
    as_vector,
    checked_top_k,
    row_of,
)


class SnapshotVectorStore(VectorStore):
    """``store`` with queries answered from ``snapshots`` when they are current."""

    display_name = STORE_NAME

    def __init__(self, store: PostgresVectorStore, snapshots: ScanCache) -> None:
        self.store = store
        self.snapshots = snapshots

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        vector, metadata = row_of(memory, embedding)
        tenant = memory.tenant
        with self.snapshots.own_write(tenant):
            generation = await self.snapshots.write(
                tenant, PUT_SQL, tenant, memory.id, vector, metadata
            )
            await self.snapshots.apply_own_write(
                tenant,
                generation,
                # An overwrite of the same id (never done by the service) replaces the row.
                removed_ids=frozenset({memory.id}),
                added=(memory.id, vector, metadata, len(msgspec.json.encode(metadata))),
            )

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        top_k = checked_top_k(top_k)
        if not isinstance(embedding, Awaitable):
            vector = as_vector(embedding)
            return await self._nearest(
                tenant, vector, top_k, await self.snapshots.generation(tenant)
            )
        # The generation does not depend on the vector: one round trip taken while the model runs
        # rather than after it. A write committed before this call is still seen, because the
        # read starts after it.
        generation = asyncio.ensure_future(self.snapshots.generation(tenant))
        try:
            vector = as_vector(await embedding)
        except BaseException:
            abandon(generation)
            raise
        return await self._nearest(tenant, vector, top_k, await generation)

    async def _nearest(
        self, tenant: str, vector: npt.NDArray[np.float32], top_k: int, generation: int
    ) -> list[Hit]:
        """From the tenant's snapshot when it is at ``generation`` or later, otherwise in SQL."""
        snapshot = await self.snapshots.current(tenant, generation)
        if snapshot is not None and snapshot.width == vector.size and vector.any():
            return snapshot.nearest(vector, top_k, workers=self.snapshots.workers)
        return await self.store.scan_in_sql(tenant, vector, top_k)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        # Read in SQL: a snapshot may lag another process's forget (see Snapshots.memories).
        return await self.store.get(tenant, ids)

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        with self.snapshots.own_write(tenant):
            generation = await self.snapshots.write(tenant, DELETE_SQL, tenant, list(ids))
            await self.snapshots.apply_own_write(tenant, generation, removed_ids=frozenset(ids))

    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        return self.store.scan_ids()
