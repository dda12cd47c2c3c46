"""The two storage interfaces every backend implements.

Everything above them — ranking, dedup, tenancy, the counters — is the same code whichever
backend is chosen. Driver errors never cross these methods: a backend raises
:class:`~shared.errors.StorageError` (or a subclass) ``from`` the driver's exception, and a failed
write condition raises :class:`~shared.errors.ConflictError`.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Final, Protocol

import msgspec

from shared.errors import InvalidInputError
from shared.model import Hit, Memory

# Keys per list request wherever a caller pages through keys: the most one S3 ListObjectsV2
# answers. Read at call time, so a test can page by 10 without writing thousands of keys.
LIST_PAGE_KEYS: Final = 1000


class StoredObject(msgspec.Struct, frozen=True, kw_only=True):
    """An object's body and the version a compare-and-swap must name (an ETag on S3)."""

    body: str
    etag: str


class MemoryRef(msgspec.Struct, frozen=True, array_like=True):
    """A memory's address in a vector store: its tenant and its id."""

    tenant: str
    memory_id: str


class ScanCounts(Protocol):
    """How often queries were answered from an in-process snapshot."""

    hits: int
    misses: int
    refreshes: int
    skips: int


class ScanCacheReport(Protocol):
    """What a store's in-process scan cache tells the metrics exporter, which must not import
    the backend that has one (an API on S3 never loads the PostgreSQL driver)."""

    @property
    def stats(self) -> ScanCounts: ...

    @property
    def held_bytes(self) -> int: ...


class VectorStore(abc.ABC):
    """Memories with their embeddings (S3 Vectors, or the PostgreSQL ``memories`` table)."""

    # The store's in-process scan cache, for metrics; None for a store without one.
    scan_cache: ScanCacheReport | None = None
    # Which store this is, in words a caller may read (tool errors, /ready): a product, never an
    # endpoint, a bucket or a table.
    display_name: str = "the memory store"

    @abc.abstractmethod
    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        """Write a memory once. Checks the metadata budget first and sends nothing over it.

        Raises:
            BudgetError: a field is over the vector metadata budget; the message names it.
            StorageError: the store failed.
        """

    @abc.abstractmethod
    async def query(self, tenant: str, embedding: Sequence[float], *, top_k: int) -> list[Hit]:
        """The nearest ``top_k`` (at most 100) memories of one tenant.

        Similarity is 1 − cosine distance. **No order is promised**: callers find the maximum
        themselves. Every returned memory belongs to ``tenant`` (re-checked by the backend).
        """

    async def query_after(
        self, tenant: str, embedding: Awaitable[Sequence[float]], *, top_k: int
    ) -> list[Hit]:
        """``query`` for the vector ``embedding`` resolves to, started before it has.

        A store may begin what does not need the vector while it is computed (the PostgreSQL
        store reads the tenant's generation). The caller owns ``embedding``: the store awaits it
        unless it fails first, and never keeps it running.
        """
        return await self.query(tenant, await embedding, top_k=top_k)

    @abc.abstractmethod
    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids in ``tenant``; missing ids dropped, order not promised."""

    async def get_for_recall(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """``get`` for recall's keyword-only hits: the bodies may come from what answered the
        tenant's last query (the PostgreSQL store's scan snapshot), so they are as fresh as the
        vector leg's own results — memories are immutable, and a memory forgotten since then is
        the same staleness the vector leg has. Not for forget or list, which read the store."""
        return await self.get(tenant, ids)

    @abc.abstractmethod
    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete these ids in ``tenant``; ids that do not exist are ignored."""

    async def housekeeping(self) -> int:
        """The store's own upkeep, run by the compactor's gc job; what it removed. The
        PostgreSQL store prunes its change log; a store with nothing to keep up does nothing."""
        return 0

    @abc.abstractmethod
    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        """Every memory in the store, all tenants, as pages of (tenant, id); order not promised.

        For the reconciler (shared.reconcile), which compares them with the index keys: on S3
        Vectors there is no per-tenant listing, so one pass over the whole index serves every
        tenant. Pages are read one at a time, so a memory written or deleted meanwhile may or
        may not be in them.
        """


class ObjectStore(abc.ABC):
    """Small mutable objects by key (ordinary S3, or the PostgreSQL ``objects`` table)."""

    # As on VectorStore: what a caller may be told failed.
    display_name: str = "the state store"

    @abc.abstractmethod
    async def get(self, key: str) -> StoredObject | None:
        """The object's body and etag, or None when there is no such key."""

    @abc.abstractmethod
    async def etag(self, key: str) -> str | None:
        """The object's current etag without its body, or None when there is no such key: what
        a reader checks to see that an object it read has not changed since."""

    @abc.abstractmethod
    async def put(
        self,
        key: str,
        body: str,
        *,
        if_match: str | None = None,
        if_none_match: bool = False,
    ) -> str:
        """Write ``body`` under ``key`` and return the new etag.

        Args:
            if_match: only overwrite when the current etag equals this (compare-and-swap).
            if_none_match: only create; fail when the key exists.

        Raises:
            ConflictError: the condition did not hold; nothing was written.
        """

    @abc.abstractmethod
    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        """Up to ``limit`` keys starting with ``prefix`` (literally), in ascending byte order,
        strictly after ``start_after`` when given."""

    @abc.abstractmethod
    async def delete(self, keys: Sequence[str]) -> None:
        """Delete these keys; keys that do not exist are ignored."""

    async def pages(
        self, prefix: str, *, page_size: int | None = None, start_after: str | None = None
    ) -> AsyncIterator[builtins.list[str]]:
        """Every key under ``prefix`` (after ``start_after``), ascending, one ``list`` call
        of ``page_size`` keys at a time; no empty page is yielded, and a caller that stops
        iterating stops the listing. ``page_size`` defaults to ``LIST_PAGE_KEYS``."""
        size = page_size or LIST_PAGE_KEYS
        while True:
            keys = await self.list(prefix, limit=size, start_after=start_after)
            if keys:
                yield keys
            if len(keys) < size:
                return
            start_after = keys[-1]


def check_one_condition(*, if_match: str | None, if_none_match: bool) -> None:
    """A write names at most one condition; both backends refuse the pair the same way."""
    if if_match is not None and if_none_match:
        raise InvalidInputError(
            "if_match", "if_match and if_none_match cannot be combined: choose one condition"
        )


class Stores(msgspec.Struct, frozen=True, kw_only=True):
    """The opened pair, and the one line that describes where they live (no secrets)."""

    vectors: VectorStore
    objects: ObjectStore
    description: str
