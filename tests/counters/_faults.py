"""A real ObjectStore with faults switched in: failed writes, crashes, and a racing writer.

It delegates to the store under test; only the named operations misbehave, and only when told.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence

from shared.counters import CounterEvents
from shared.errors import StorageUnavailableError
from shared.storage.interfaces import ObjectStore, StoredObject, WriteCondition


class SimulatedCrashError(BaseException):
    """The process "died" here: nothing after this point ran. A BaseException, so that no
    handler meant for errors (a job's per-tenant one) can absorb it, as none could a real crash."""


class FaultyStore(ObjectStore):
    def __init__(
        self,
        inner: ObjectStore,
        *,
        fail_puts_under: str | None = None,
        crash_delete_probability: float = 0.0,
        rng: random.Random | None = None,
        before_conditional_put: Callable[[], Awaitable[None]] | None = None,
        reads_together: int = 0,
    ) -> None:
        self.inner = inner
        self.fail_puts_under = fail_puts_under
        self.crash_delete_probability = crash_delete_probability
        self.rng = rng or random.Random(0)
        self.before_conditional_put = before_conditional_put
        self.crashes = 0
        # While set, shard writes wait for this gate: stamped now, landing when it opens.
        self.shard_gate: asyncio.Event | None = None
        # Every key read, in order: what a test counts reads by.
        self.gets: list[str] = []
        # Racing readers: each get_many waits until this many have begun, so all of them read
        # the same state before any of them writes, however fast the backend answers.
        self._reads_together = reads_together
        self._reading = 0
        self._all_reading = asyncio.Event()

    async def get(self, key: str) -> StoredObject | None:
        self.gets.append(key)
        return await self.inner.get(key)

    async def get_many(self, keys: Sequence[str]) -> dict[str, StoredObject]:
        if self._reads_together:
            self._reading += 1
            if self._reading >= self._reads_together:
                self._all_reading.set()
            await self._all_reading.wait()
        self.gets.extend(keys)
        return await self.inner.get_many(keys)

    async def etag(self, key: str) -> str | None:
        return await self.inner.etag(key)

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        if self.fail_puts_under is not None and key.startswith(self.fail_puts_under):
            raise StorageUnavailableError("simulated outage")
        if self.shard_gate is not None and "/shard/" in key:
            await self.shard_gate.wait()
        if condition.conditional and self.before_conditional_put is not None:
            hook, self.before_conditional_put = self.before_conditional_put, None
            await hook()
        return await self.inner.write(key, body, condition)

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        return await self.inner.list(prefix, limit=limit, start_after=start_after)

    async def delete(self, keys: Sequence[str]) -> None:
        if self.rng.random() < self.crash_delete_probability:
            self.crashes += 1
            raise SimulatedCrashError("crashed between compare-and-swap and delete")
        await self.inner.delete(keys)


class RecordedEvents:
    """A CounterEvents that keeps what it was told."""

    def __init__(self) -> None:
        self.backlogs: list[int] = []
        self.conflicts = 0
        self.flush_failures = 0
        self.folds: list[float] = []

    def shard_backlog(self, shards: int) -> None:
        self.backlogs.append(shards)

    def cas_conflict(self) -> None:
        self.conflicts += 1

    def flush_failed(self) -> None:
        self.flush_failures += 1

    def fold_seconds(self, seconds: float) -> None:
        self.folds.append(seconds)


class Clock:
    """An injectable millisecond clock that only moves when told."""

    def __init__(self, now_ms: int) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def offset(self, skew_ms: int) -> Callable[[], int]:
        """This clock as a process whose own clock is ``skew_ms`` off sees it."""
        return lambda: self.now_ms + skew_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


def _is_counter_events(events: CounterEvents) -> CounterEvents:
    return events


_is_counter_events(RecordedEvents())
