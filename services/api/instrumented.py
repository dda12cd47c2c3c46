"""Latency metrics at the seams: the stores and the embedder wrapped, not their callers edited.

Each wrapper implements the same interface as what it wraps and observes one histogram sample
per call, labelled by operation only (never a tenant, never content).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence

from prometheus_client import Histogram

from services.api import metrics
from services.api.deadlines import WhenReady
from shared.embedding import Embedder
from shared.model import Hit, Memory
from shared.storage import MemoryRef, ObjectStore, StoredObject, VectorStore
from shared.storage.interfaces import Embedding, WriteCondition


@contextlib.contextmanager
def _timed(histogram: Histogram, operation: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        histogram.labels(operation=operation).observe(time.perf_counter() - started)


class InstrumentedVectorStore(VectorStore):
    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        with _timed(metrics.STORAGE_SECONDS, "vector_put"):
            await self._inner.put(memory, embedding)

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        if not isinstance(embedding, Awaitable):
            with _timed(metrics.STORAGE_SECONDS, "vector_query"):
                return await self._inner.query(tenant, embedding, top_k=top_k)
        # Timed from when the vector is ready: the time before it is the embedder's histogram.
        ready_at: list[float] = []
        try:
            stamped = WhenReady(embedding, lambda: ready_at.append(time.perf_counter()))
            return await self._inner.query(tenant, stamped, top_k=top_k)
        finally:
            if ready_at:
                metrics.STORAGE_SECONDS.labels(operation="vector_query").observe(
                    time.perf_counter() - ready_at[0]
                )

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        with _timed(metrics.STORAGE_SECONDS, "vector_get"):
            return await self._inner.get(tenant, ids)

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        with _timed(metrics.STORAGE_SECONDS, "vector_delete"):
            await self._inner.delete(tenant, ids)

    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        # The reconciler's (compactor's) pass, never on a tool call's path: not timed.
        return self._inner.scan_ids()


class InstrumentedObjectStore(ObjectStore):
    def __init__(self, inner: ObjectStore) -> None:
        self._inner = inner

    async def get(self, key: str) -> StoredObject | None:
        with _timed(metrics.STORAGE_SECONDS, "object_get"):
            return await self._inner.get(key)

    async def etag(self, key: str) -> str | None:
        with _timed(metrics.STORAGE_SECONDS, "object_etag"):
            return await self._inner.etag(key)

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        operation = "object_cas" if condition.conditional else "object_put"
        with _timed(metrics.STORAGE_SECONDS, operation):
            return await self._inner.write(key, body, condition)

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        with _timed(metrics.STORAGE_SECONDS, "object_list"):
            return await self._inner.list(prefix, limit=limit, start_after=start_after)

    async def delete(self, keys: Sequence[str]) -> None:
        with _timed(metrics.STORAGE_SECONDS, "object_delete"):
            await self._inner.delete(keys)


class InstrumentedEmbedder(Embedder):
    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model = inner.model
        self.dim = inner.dim

    async def embed(self, text: str) -> list[float]:
        with _timed(metrics.EMBEDDING_SECONDS, "embed"):
            return await self._inner.embed(text)

    async def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        with _timed(metrics.EMBEDDING_SECONDS, "embed_many"):
            return await self._inner.embed_many(texts)

    async def close(self) -> None:
        await self._inner.close()
