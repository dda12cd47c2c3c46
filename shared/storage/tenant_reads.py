"""Per-tenant reads of the store, reused for a window, and this process's writes kept beside them.

Two things read a tenant's state from the object store and must show this process's own writes
at once while showing other processes' within a window: the access counters
(``shared.counters``) and the replacement records (``shared.revisions``). Both follow one rule,
kept here once:

- A read is cached per tenant for ``ttl_ms`` (least recently used tenants dropped past
  ``max_tenants``); callers that find it stale share one read (``shared_run``).
- Every read and every completed own write takes a number from one sequence, which orders them
  without trusting the (injectable) clock. A write whose number is above a read's may be missing
  from it; one below is in it.
- An own write is kept until a read that started after it completed is cached, or until it is
  older than any cache entry can be (then every cached read has it).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from typing import Final, Generic, TypeVar

import msgspec

from shared.process.tasks import shared_run

# How stale a read of another process's writes may be: one window for the counters and the
# replacement records alike.
DEFAULT_CACHE_TTL_MS: Final = 60_000
DEFAULT_MAX_CACHED_TENANTS: Final = 4096

T = TypeVar("T")
W = TypeVar("W")


class TenantRead(msgspec.Struct, Generic[T], kw_only=True):
    """One read of a tenant: its value, when it started and its place in the sequence."""

    value: T
    read_at_ms: int
    read_seq: int


class _OwnWrite(msgspec.Struct, Generic[W], kw_only=True):
    write: W
    # None while the write is under way: it is kept whatever reads come meanwhile.
    done_seq: int | None = None
    done_at_ms: int = 0


class TenantReads(Generic[T, W]):
    """Cached reads per tenant and the own writes not yet known to be in them."""

    def __init__(
        self,
        read: Callable[[str], Awaitable[T]],
        *,
        clock_ms: Callable[[], int],
        ttl_ms: int,
        max_tenants: int,
    ) -> None:
        self._read = read
        self._clock_ms = clock_ms
        self.ttl_ms = ttl_ms
        self._max_tenants = max_tenants
        self._cached: OrderedDict[str, TenantRead[T]] = OrderedDict()
        self._reading: dict[str, asyncio.Future[TenantRead[T]]] = {}
        self._own: dict[str, list[_OwnWrite[W]]] = {}
        self._seq = itertools.count(1)

    def cached(self, tenant: str) -> TenantRead[T] | None:
        """The tenant's read if it is younger than ``ttl_ms``."""
        read = self._cached.get(tenant)
        if read is None or self._clock_ms() - read.read_at_ms >= self.ttl_ms:
            return None
        self._cached.move_to_end(tenant)
        return read

    async def get(self, tenant: str) -> TenantRead[T]:
        """The cached read, or one new read shared by every caller that finds it stale.

        Raises:
            whatever ``read`` raises; nothing is cached then.
        """
        read = self.cached(tenant)
        if read is None:
            read = await shared_run(self._reading, tenant, lambda: self._read_and_keep(tenant))
        return read

    def writing(self, tenant: str, write: W) -> _OwnWrite[W]:
        """Note an own write as under way; ``done`` or ``failed`` must follow."""
        own = _OwnWrite(write=write)
        self._own.setdefault(tenant, []).append(own)
        return own

    def done(self, own: _OwnWrite[W]) -> None:
        own.done_seq, own.done_at_ms = next(self._seq), self._clock_ms()

    def failed(self, tenant: str, own: _OwnWrite[W]) -> None:
        self._own[tenant].remove(own)
        if not self._own[tenant]:
            del self._own[tenant]

    def own(self, tenant: str) -> Iterator[W]:
        """The own writes kept for the tenant, under way or done, oldest first."""
        return (own.write for own in self._own.get(tenant, ()))

    def done_after(self, tenant: str, read: TenantRead[T]) -> Iterator[W]:
        """The own writes that completed after ``read`` started: it may lack them."""
        for own in self._own.get(tenant, ()):
            if own.done_seq is not None and own.done_seq > read.read_seq:
                yield own.write

    def forget_old_writes(self, tenant: str | None = None) -> None:
        """Drop own writes (of one tenant, or of all) older than any cache entry can be: every
        cached read has them."""
        for name in [tenant] if tenant is not None else list(self._own):
            self._keep(name, lambda own: True)

    async def _read_and_keep(self, tenant: str) -> TenantRead[T]:
        read_seq, read_at_ms = next(self._seq), self._clock_ms()
        read = TenantRead(value=await self._read(tenant), read_at_ms=read_at_ms, read_seq=read_seq)
        self._cached[tenant] = read
        self._cached.move_to_end(tenant)
        now_ms = self._clock_ms()
        stale = [t for t, r in self._cached.items() if now_ms - r.read_at_ms >= self.ttl_ms]
        for name in stale:
            del self._cached[name]
        while len(self._cached) > self._max_tenants:
            self._cached.popitem(last=False)
        # A write is no longer needed once a read that started after it completed exists.
        self._keep(tenant, lambda own: own.done_seq is not None and own.done_seq > read_seq)
        return read

    def _keep(self, tenant: str, needed: Callable[[_OwnWrite[W]], bool]) -> None:
        now_ms = self._clock_ms()
        kept = [
            own
            for own in self._own.get(tenant, [])
            if own.done_seq is None or (needed(own) and now_ms - own.done_at_ms < self.ttl_ms)
        ]
        if kept:
            self._own[tenant] = kept
        else:
            self._own.pop(tenant, None)
