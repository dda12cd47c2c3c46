"""The stores and the embedder as the API's path calls them: each wrapped in one that bounds
and times every call, their callers not edited. Each wrapper implements the interface it wraps.

Latency: one histogram sample per call, labelled by operation only (never a tenant, never
content).

Deadlines: one per storage call (``STORAGE_TIMEOUT_S``), on both backends. The clients' own
settings bound one attempt (botocore's connect and read timeouts, asyncpg's command timeout),
but none bounds a whole call: botocore retries an attempt that timed out, and a PostgreSQL call
may wait for a pooled connection before its statement's clock starts. So each call runs under
one asyncio deadline, and a call that outlives it raises :class:`StorageTimeoutError` naming the
store and the operation, which the tool guard reports to the caller and counts.

A call cut short is abandoned the way a crash abandons it: a write may or may not have landed,
which every write path already tolerates (a retry is idempotent or answers "already known", and
the reconciler repairs a half-written memory). On PostgreSQL its connection is closed rather
than returned to the pool, so the answer never waits on a stalled server
(``shared.storage.postgres._datastore.discarding``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any, TypeVar

from prometheus_client import Histogram

from services.api import metrics
from shared.embedding import Embedder
from shared.errors import StorageTimeoutError
from shared.model import Hit, Memory
from shared.storage import MemoryRef, ObjectStore, StoredObject, VectorStore
from shared.storage.interfaces import GET_MANY_BATCH, Embedding, WriteCondition

T = TypeVar("T")


@contextlib.contextmanager
def _timed(histogram: Histogram, operation: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        histogram.labels(operation=operation).observe(time.perf_counter() - started)


class WhenReady:
    """A vector still being computed, passed through unchanged, that calls ``then`` once it is
    ready: where a query's deadline and latency start (not in the embedder's time)."""

    def __init__(self, inner: Awaitable[Sequence[float]], then: Callable[[], object]) -> None:
        self._inner = inner
        self._then = then

    def __await__(self) -> Generator[Any, None, Sequence[float]]:
        value = yield from self._inner.__await__()
        self._then()
        return value


class _Bounded:
    """What both store wrappers share: the inner store's name, the deadline and the sample."""

    def __init__(self, display_name: str, *, timeout_s: float) -> None:
        self.display_name = display_name
        self._timeout_s = timeout_s

    async def _call(
        self,
        operation: str,
        call: Awaitable[T],
        deadline: asyncio.Timeout | None = None,
        started: list[float] | None = None,
    ) -> T:
        """``call`` under ``deadline`` (by default ``timeout_s`` from now), timed from now or
        from ``started[0]`` once something has put it there."""
        deadline = deadline or asyncio.timeout(self._timeout_s)
        started = [time.perf_counter()] if started is None else started
        try:
            async with deadline:
                return await call
        except TimeoutError:
            if deadline.expired():
                raise StorageTimeoutError(
                    f"{operation} on {self.display_name} did not finish within "
                    f"{self._timeout_s:g} s (STORAGE_TIMEOUT_S)",
                    store=self.display_name,
                    operation=operation,
                    timeout_s=self._timeout_s,
                ) from None
            raise  # the store's own TimeoutError, not this deadline's
        finally:
            if started:
                metrics.STORAGE_SECONDS.labels(operation=operation).observe(
                    time.perf_counter() - started[0]
                )


class GuardedVectorStore(_Bounded, VectorStore):
    """``inner`` with every call bounded by ``timeout_s`` and timed."""

    def __init__(self, inner: VectorStore, *, timeout_s: float) -> None:
        super().__init__(inner.display_name, timeout_s=timeout_s)
        self._inner = inner

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        await self._call("vector_put", self._inner.put(memory, embedding))

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        if not isinstance(embedding, Awaitable):
            return await self._call(
                "vector_query", self._inner.query(tenant, embedding, top_k=top_k)
            )
        # Neither the deadline nor the sample starts until the vector is ready: the time before
        # it is the embedder's histogram, and the tool's own deadline covers it.
        deadline = asyncio.timeout(None)
        ready_at: list[float] = []

        def ready() -> None:
            ready_at.append(time.perf_counter())
            deadline.reschedule(asyncio.get_running_loop().time() + self._timeout_s)

        call = self._inner.query(tenant, WhenReady(embedding, ready), top_k=top_k)
        return await self._call("vector_query", call, deadline, started=ready_at)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        return await self._call("vector_get", self._inner.get(tenant, ids))

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        await self._call("vector_delete", self._inner.delete(tenant, ids))

    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        # The reconciler's (compactor's) pass, never on a tool call's path: neither bounded
        # nor timed.
        return self._inner.scan_ids()


class GuardedObjectStore(_Bounded, ObjectStore):
    """``inner`` with every call bounded by ``timeout_s`` and timed."""

    def __init__(self, inner: ObjectStore, *, timeout_s: float) -> None:
        super().__init__(inner.display_name, timeout_s=timeout_s)
        self._inner = inner

    async def get(self, key: str) -> StoredObject | None:
        return await self._call("object_get", self._inner.get(key))

    async def get_many(self, keys: Sequence[str]) -> dict[str, StoredObject]:
        # Bounded batch by batch, as each get was: a fold's backlog may be thousands of keys.
        found: dict[str, StoredObject] = {}
        for start in range(0, len(keys), GET_MANY_BATCH):
            batch = keys[start : start + GET_MANY_BATCH]
            found.update(await self._call("object_get_many", self._inner.get_many(batch)))
        return found

    async def etag(self, key: str) -> str | None:
        return await self._call("object_etag", self._inner.etag(key))

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        operation = "object_cas" if condition.conditional else "object_put"
        return await self._call(operation, self._inner.write(key, body, condition))

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        return await self._call(
            "object_list", self._inner.list(prefix, limit=limit, start_after=start_after)
        )

    async def delete(self, keys: Sequence[str]) -> None:
        await self._call("object_delete", self._inner.delete(keys))


class TimedEmbedder(Embedder):
    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.model = inner.model
        self.dim = inner.dim
        self.relation_lines = inner.relation_lines

    async def embed(self, text: str) -> list[float]:
        with _timed(metrics.EMBEDDING_SECONDS, "embed"):
            return await self._inner.embed(text)

    async def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        with _timed(metrics.EMBEDDING_SECONDS, "embed_many"):
            return await self._inner.embed_many(texts)

    async def close(self) -> None:
        await self._inner.close()
