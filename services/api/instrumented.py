"""Latency metrics at the seams: the stores and the embedder wrapped, not their callers edited.

Each wrapper implements the same interface as what it wraps and observes one histogram sample
per call, labelled by operation only (never a tenant, never content).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Generator, Iterator, Sequence
from typing import Any

from prometheus_client import Histogram

from services.api import metrics
from shared.embedding import Embedder
from shared.model import Hit, Memory
from shared.storage import MemoryRef, ObjectStore, StoredObject, VectorStore


@contextlib.contextmanager
def _timed(histogram: Histogram, operation: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        histogram.labels(operation=operation).observe(time.perf_counter() - started)


class _Stamped:
    """An awaitable passed through unchanged that notes when it produced its value."""

    def __init__(self, inner: Awaitable[Sequence[float]]) -> None:
        self._inner = inner
        self.ready_at: float | None = None

    def __await__(self) -> Generator[Any, None, Sequence[float]]:
        value = yield from self._inner.__await__()
        self.ready_at = time.perf_counter()
        return value


class InstrumentedVectorStore(VectorStore):
    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        with _timed(metrics.STORAGE_SECONDS, "vector_put"):
            await self._inner.put(memory, embedding)

    async def query(self, tenant: str, embedding: Sequence[float], *, top_k: int) -> list[Hit]:
        with _timed(metrics.STORAGE_SECONDS, "vector_query"):
            return await self._inner.query(tenant, embedding, top_k=top_k)

    async def query_after(
        self, tenant: str, embedding: Awaitable[Sequence[float]], *, top_k: int
    ) -> list[Hit]:
        # Timed from when the vector is ready: the time before it is the embedder's histogram.
        stamped = _Stamped(embedding)
        try:
            return await self._inner.query_after(tenant, stamped, top_k=top_k)
        finally:
            if stamped.ready_at is not None:
                metrics.STORAGE_SECONDS.labels(operation="vector_query").observe(
                    time.perf_counter() - stamped.ready_at
                )

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        with _timed(metrics.STORAGE_SECONDS, "vector_get"):
            return await self._inner.get(tenant, ids)

    async def get_for_recall(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        with _timed(metrics.STORAGE_SECONDS, "vector_get_for_recall"):
            return await self._inner.get_for_recall(tenant, ids)

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

    async def put(
        self,
        key: str,
        body: str,
        *,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> str:
        conditional = if_match is not None or if_none_match
        with _timed(metrics.STORAGE_SECONDS, "object_cas" if conditional else "object_put"):
            return await self._inner.put(key, body, if_match=if_match, if_none_match=if_none_match)

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
