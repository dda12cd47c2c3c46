"""This process's own writes to a tenant, between their statement and their carry-in into the
snapshot, and the ones that finished ahead of an earlier one and wait for it."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

# (id, vector, metadata as stored, stored bytes) of a row an own write added.
AddedRow = tuple[str, npt.NDArray[np.float32], Mapping[str, Any], int]
# Own writes that may wait per tenant for an earlier one to be carried in: more than the
# writes one process runs at once.
MAX_WAITING_WRITES: Final = 256


@dataclass(frozen=True)
class OwnWrite:
    generation: int
    removed_ids: frozenset[str]
    added: AddedRow | None


class OwnWrites:
    """Per tenant: the writes under way (tokens), the finished ones waiting by generation, and
    an event set at the tenant's next change (an install, or the end of a write)."""

    def __init__(self) -> None:
        self._writing: dict[str, set[int]] = {}
        self._waiting: dict[str, dict[int, OwnWrite]] = {}
        self._changes: dict[str, asyncio.Event] = {}
        self._tokens = itertools.count()

    @contextlib.contextmanager
    def bracket(self, tenant: str) -> Iterator[None]:
        token = next(self._tokens)
        self._writing.setdefault(tenant, set()).add(token)
        try:
            yield
        finally:
            writing = self._writing[tenant]
            writing.discard(token)
            if not writing:
                del self._writing[tenant]
            self.notify(tenant)

    def under_way(self, tenant: str) -> frozenset[int]:
        return frozenset(self._writing.get(tenant, ()))

    def change_of(self, tenant: str) -> asyncio.Event:
        """An event set at the tenant's next install or end of an own write."""
        event = self._changes.get(tenant)
        if event is None:
            event = self._changes[tenant] = asyncio.Event()
        return event

    def notify(self, tenant: str) -> None:
        event = self._changes.pop(tenant, None)
        if event is not None:
            event.set()

    def wait_for(self, tenant: str, write: OwnWrite, *, next_generation: int) -> None:
        """Queue a finished write (the one the snapshot needs next always, others up to the
        bound)."""
        waiting = self._waiting.setdefault(tenant, {})
        if write.generation == next_generation or len(waiting) < MAX_WAITING_WRITES:
            waiting[write.generation] = write

    def take(self, tenant: str, generation: int) -> OwnWrite | None:
        return self._waiting.get(tenant, {}).pop(generation, None)

    def keep_after(self, tenant: str, generation: int) -> None:
        """Drop the waiting writes a snapshot at ``generation`` already includes."""
        later = {g: w for g, w in self._waiting.pop(tenant, {}).items() if g > generation}
        if later:
            self._waiting[tenant] = later

    def forget(self, tenant: str) -> None:
        self._waiting.pop(tenant, None)

    def close(self) -> None:
        self._waiting.clear()
        for tenant in list(self._changes):
            self.notify(tenant)  # queries waiting for own writes go on (and miss)
