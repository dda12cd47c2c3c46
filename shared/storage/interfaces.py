"""The two storage interfaces every backend implements.

Everything above them — ranking, dedup, tenancy, the counters — is the same code whichever
backend is chosen. Driver errors never cross these methods: a backend raises
:class:`~shared.errors.StorageError` (or a subclass) ``from`` the driver's exception, and a failed
write condition raises :class:`~shared.errors.ConflictError`.
"""

from __future__ import annotations

import abc
import asyncio
import builtins
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final, Protocol

import msgspec

from shared.errors import InvalidInputError
from shared.model import Hit, Memory

# Keys per list request wherever a caller pages through keys: the most one S3 ListObjectsV2
# answers. Read at call time, so a test can page by 10 without writing thousands of keys.
LIST_PAGE_KEYS: Final = 1000
# ``ObjectStore.get_many``: keys a backend reads in one request where it can (PostgreSQL: a
# lexicon shard of a long message is tens of KB, and decoding a query's rows holds the event
# loop), which is also the unit a per-request deadline bounds; and, where a request reads one
# key (S3), how many are read at once.
GET_MANY_BATCH: Final = 200
GET_CONCURRENCY: Final = 16

# A query's vector, or the vector still being computed (the embedder's task).
Embedding = Sequence[float] | Awaitable[Sequence[float]]


async def ready(embedding: Embedding) -> Sequence[float]:
    """The vector, once it is computed."""
    return await embedding if isinstance(embedding, Awaitable) else embedding


class StoredObject(msgspec.Struct, frozen=True, kw_only=True):
    """An object's body and the version a compare-and-swap must name (an ETag on S3)."""

    body: str
    etag: str


class WriteCondition(msgspec.Struct, frozen=True):
    """What a write requires of its key: that the etag is ``if_match`` (compare-and-swap), or
    with ``if_none_match`` that there is none (create only); at most one of them."""

    if_match: str | None = None
    if_none_match: bool = False

    def __post_init__(self) -> None:
        if self.if_match is not None and self.if_none_match:
            raise InvalidInputError(
                "if_match", "if_match and if_none_match cannot be combined: choose one condition"
            )

    @property
    def conditional(self) -> bool:
        return self.if_match is not None or self.if_none_match


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


class Snapshots(Protocol):
    """A backend's in-process snapshots of recently queried tenants, which its vector store
    answers queries from (PostgreSQL's, see ``storage/postgres/scan``), as the layers above use
    them without importing the backend: recall reads bodies from them, the API exports their
    counts (an API on S3 never loads the PostgreSQL driver)."""

    @property
    def stats(self) -> ScanCounts: ...

    @property
    def held_bytes(self) -> int: ...

    def memories(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """Those of ``ids`` the tenant's snapshot holds, read from nothing: as fresh as the
        tenant's last query, which it answered or which refreshed it — memories are immutable,
        and one forgotten since is the same staleness that query's hits have. For recall's
        keyword-only hits, never for forget or list, which read the store."""


class VectorStore(abc.ABC):
    """Memories with their embeddings (S3 Vectors, or the PostgreSQL ``memories`` table).

    These five methods are the whole contract. What a backend does faster (PostgreSQL's
    in-process snapshots) it does inside them, in a store the factory composes (see Stores)."""

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
    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        """The nearest ``top_k`` (at most 100) memories of one tenant.

        Similarity is 1 − cosine distance. **No order is promised**: callers find the maximum
        themselves. Every returned memory belongs to ``tenant`` (re-checked by the backend).

        ``embedding`` may still be being computed (an awaitable): a store may begin meanwhile
        what does not need the vector (PostgreSQL's snapshots read the tenant's generation), and
        a write committed before the call is seen either way. The caller owns the awaitable:
        the store awaits it unless it fails first, and never keeps it running.
        """

    @abc.abstractmethod
    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """The memories with these ids in ``tenant``; missing ids dropped, order not promised."""

    @abc.abstractmethod
    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete these ids in ``tenant``; ids that do not exist are ignored."""

    @abc.abstractmethod
    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        """Every memory in the store, all tenants, as pages of (tenant, id); order not promised.

        For the reconciler (shared.memories.reconcile), which compares them with the index keys:
        on S3 Vectors there is no per-tenant listing, so one pass over the whole index serves every
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

    async def get_many(self, keys: Sequence[str]) -> dict[str, StoredObject]:
        """The objects of ``keys`` that exist, by key. Here one ``get`` per key,
        ``GET_CONCURRENCY`` at a time (S3 reads one object per request); a backend that can
        read many keys in one request overrides it."""
        gate = asyncio.Semaphore(GET_CONCURRENCY)

        async def one(key: str) -> tuple[str, StoredObject | None]:
            async with gate:
                return key, await self.get(key)

        read = await asyncio.gather(*(one(key) for key in dict.fromkeys(keys)))
        return {key: stored for key, stored in read if stored is not None}

    @abc.abstractmethod
    async def etag(self, key: str) -> str | None:
        """The object's current etag without its body, or None when there is no such key: what
        a reader checks to see that an object it read has not changed since."""

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
            InvalidInputError: both conditions were named.
            ConflictError: the condition did not hold; nothing was written.
        """
        return await self.write(key, body, WriteCondition(if_match, if_none_match))

    @abc.abstractmethod
    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        """``put`` with its condition as one checked value: what a backend (or a wrapper)
        implements, once, for every caller of ``put``."""

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


class Stores(msgspec.Struct, frozen=True, kw_only=True):
    """The opened pair, the one line that describes where they live (no secrets), and what the
    backend offers beside the two interfaces."""

    vectors: VectorStore
    objects: ObjectStore
    description: str
    # The snapshots ``vectors`` answers queries from: recall reads bodies from them, the API
    # exports their counts. None without (S3, or PostgreSQL with PG_SCAN_CACHE_MB=0).
    snapshots: Snapshots | None = None
    # The backend's own housekeeping, run by the compactor's gc job; how many rows it removed
    # (PostgreSQL prunes its change log). None: nothing to keep up.
    housekeeping: Callable[[], Awaitable[int]] | None = None
    # Whether a write may succeed now, for the readiness probe: raises StorageFullError when
    # the backend knows its disk is full (PostgreSQL). None: nothing to tell beyond the probe's
    # reads.
    space: Callable[[], Awaitable[None]] | None = None
