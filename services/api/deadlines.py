"""One deadline per storage call on the API's path (``STORAGE_TIMEOUT_S``), on both backends.

The clients' own settings bound one attempt (botocore's connect and read timeouts, asyncpg's
command timeout), but none bounds a whole call: botocore retries an attempt that timed out, and
a PostgreSQL call may wait for a pooled connection before its statement's clock starts. So each
call the API makes through the store interfaces runs under one asyncio deadline, and a call that
outlives it raises :class:`StorageTimeoutError` naming the store and the operation, which the
tool guard reports to the caller and counts.

A call cut short is abandoned the way a crash abandons it: a write may or may not have landed,
which every write path already tolerates (a retry is idempotent or answers "already known", and
the reconciler repairs a half-written memory).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import Any, TypeVar

from shared.errors import StorageTimeoutError
from shared.model import Hit, Memory
from shared.storage import MemoryRef, ObjectStore, StoredObject, VectorStore
from shared.storage.interfaces import Embedding, WriteCondition

T = TypeVar("T")


async def _within(
    timeout_s: float,
    *,
    store: str,
    operation: str,
    call: Awaitable[T],
    deadline: asyncio.Timeout | None = None,
) -> T:
    """``call`` under ``deadline``, by default ``timeout_s`` from now."""
    if deadline is None:
        deadline = asyncio.timeout(timeout_s)
    try:
        async with deadline:
            return await call
    except TimeoutError:
        if deadline.expired():
            raise _timed_out(timeout_s, store=store, operation=operation) from None
        raise  # the store's own TimeoutError, not this deadline's


def _timed_out(timeout_s: float, *, store: str, operation: str) -> StorageTimeoutError:
    return StorageTimeoutError(
        f"{operation} on {store} did not finish within {timeout_s:g} s (STORAGE_TIMEOUT_S)",
        store=store,
        operation=operation,
        timeout_s=timeout_s,
    )


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


class BoundedVectorStore(VectorStore):
    """``inner`` with every call bounded by ``timeout_s``."""

    def __init__(self, inner: VectorStore, *, timeout_s: float) -> None:
        self._inner = inner
        self._timeout_s = timeout_s
        self.display_name = inner.display_name

    def _within(
        self, operation: str, call: Awaitable[T], deadline: asyncio.Timeout | None = None
    ) -> Awaitable[T]:
        return _within(
            self._timeout_s,
            store=self.display_name,
            operation=operation,
            call=call,
            deadline=deadline,
        )

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        await self._within("vector_put", self._inner.put(memory, embedding))

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        if isinstance(embedding, Awaitable):
            # No deadline until the vector is ready; the tool's own deadline covers the embedder.
            deadline = asyncio.timeout(None)
            at = asyncio.get_running_loop().time
            embedding = WhenReady(embedding, lambda: deadline.reschedule(at() + self._timeout_s))
        else:
            deadline = asyncio.timeout(self._timeout_s)
        call = self._inner.query(tenant, embedding, top_k=top_k)
        return await self._within("vector_query", call, deadline)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        return await self._within("vector_get", self._inner.get(tenant, ids))

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        await self._within("vector_delete", self._inner.delete(tenant, ids))

    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        # The reconciler's (compactor's) pass, never on a tool call's path.
        return self._inner.scan_ids()


class BoundedObjectStore(ObjectStore):
    """``inner`` with every call bounded by ``timeout_s``."""

    def __init__(self, inner: ObjectStore, *, timeout_s: float) -> None:
        self._inner = inner
        self._timeout_s = timeout_s
        self.display_name = inner.display_name

    def _within(self, operation: str, call: Awaitable[T]) -> Awaitable[T]:
        return _within(self._timeout_s, store=self.display_name, operation=operation, call=call)

    async def get(self, key: str) -> StoredObject | None:
        return await self._within("object_get", self._inner.get(key))

    async def etag(self, key: str) -> str | None:
        return await self._within("object_etag", self._inner.etag(key))

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        return await self._within(
            "object_cas" if condition.conditional else "object_put",
            self._inner.write(key, body, condition),
        )

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        return await self._within(
            "object_list", self._inner.list(prefix, limit=limit, start_after=start_after)
        )

    async def delete(self, keys: Sequence[str]) -> None:
        await self._within("object_delete", self._inner.delete(keys))


__all__ = ["BoundedObjectStore", "BoundedVectorStore", "WhenReady"]
