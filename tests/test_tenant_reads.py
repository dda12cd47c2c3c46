"""TenantReads: one read per tenant per window, shared by concurrent callers, and own writes kept
exactly as long as a cached read may lack them."""

from __future__ import annotations

import asyncio

from shared.storage.tenant_reads import TenantReads


class Store:
    """A tenant's state as a counter of reads; ``gate`` holds a read open when set."""

    def __init__(self) -> None:
        self.reads: dict[str, int] = {}
        self.gate: asyncio.Event | None = None

    async def read(self, tenant: str) -> int:
        self.reads[tenant] = self.reads.get(tenant, 0) + 1
        if self.gate is not None:
            await self.gate.wait()
        return self.reads[tenant]


class Clock:
    def __init__(self) -> None:
        self.now_ms = 1_000_000

    def __call__(self) -> int:
        return self.now_ms


def reads_of(store: Store, clock: Clock, *, max_tenants: int = 10) -> TenantReads[int, str]:
    return TenantReads(store.read, clock_ms=clock, ttl_ms=60_000, max_tenants=max_tenants)


async def test_a_read_is_reused_within_the_window_and_renewed_after_it() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock)
    assert (await reads.get("acme")).value == 1
    clock.now_ms += 59_999
    assert (await reads.get("acme")).value == 1
    clock.now_ms += 1
    assert (await reads.get("acme")).value == 2


async def test_concurrent_callers_share_one_read() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock)
    store.gate = asyncio.Event()
    waiting = [asyncio.create_task(reads.get("acme")) for _ in range(8)]
    await asyncio.sleep(0)
    store.gate.set()
    assert {(await task).value for task in waiting} == {1}
    assert store.reads == {"acme": 1}


async def test_the_least_recently_used_tenant_is_dropped_past_the_bound() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock, max_tenants=2)
    for tenant in ("a", "b", "a", "c"):
        await reads.get(tenant)
    assert reads.cached("a") is not None and reads.cached("c") is not None
    assert reads.cached("b") is None


async def test_an_own_write_is_kept_until_a_read_that_started_after_it() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock)
    first = await reads.get("acme")
    reads.done(reads.writing("acme", "w1"))
    # Completed after the cached read started: that read may lack it.
    assert list(reads.done_after("acme", first)) == ["w1"]

    # A read under way while a write completes keeps the write too.
    store.gate = asyncio.Event()
    clock.now_ms += 60_000
    reading = asyncio.create_task(reads.get("acme"))
    while store.reads["acme"] < 2:  # until the read has begun
        await asyncio.sleep(0)
    reads.done(reads.writing("acme", "w2"))
    store.gate.set()
    second = await reading
    assert list(reads.own("acme")) == ["w2"]  # w1 completed before this read began
    assert list(reads.done_after("acme", second)) == ["w2"]


async def test_a_write_under_way_stays_and_a_failed_one_goes() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock)
    under_way = reads.writing("acme", "w1")
    clock.now_ms += 120_000
    await reads.get("acme")
    reads.forget_old_writes()
    assert list(reads.own("acme")) == ["w1"]
    assert list(reads.done_after("acme", await reads.get("acme"))) == []  # not done yet
    reads.failed("acme", under_way)
    assert list(reads.own("acme")) == []


async def test_writes_older_than_the_window_are_forgotten() -> None:
    store, clock = Store(), Clock()
    reads = reads_of(store, clock)
    reads.done(reads.writing("acme", "old"))
    clock.now_ms += 30_000
    reads.done(reads.writing("acme", "recent"))
    clock.now_ms += 30_000
    reads.forget_old_writes("acme")
    assert list(reads.own("acme")) == ["recent"]
