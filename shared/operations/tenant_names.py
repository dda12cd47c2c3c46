"""The names of the tenants that have a memory, kept a few seconds: read only when an answer
would be empty, to say which existing tenant a mistyped one probably meant (``tenant_hint``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from shared.storage import ObjectStore, index_tenants

# One listing per tenant: enough for one person's machine, where the hint is given at all.
TENANTS_READ: Final = 1_000
KEPT_MS: Final = 5_000


class TenantNames:
    """The tenant names, read again once they are ``KEPT_MS`` old."""

    def __init__(self, objects: ObjectStore, *, clock_ms: Callable[[], int]) -> None:
        self._objects = objects
        self._clock_ms = clock_ms
        self._names: frozenset[str] = frozenset()
        self._read_at: int | None = None

    async def names(self) -> frozenset[str]:
        now = self._clock_ms()
        if self._read_at is None or now - self._read_at >= KEPT_MS or now < self._read_at:
            self._names = frozenset(await index_tenants(self._objects, limit=TENANTS_READ))
            self._read_at = now
        return self._names
