"""The snapshots a process holds, least recently used first, within a byte budget."""

from __future__ import annotations

from collections import OrderedDict

from shared.storage.postgres.scan.snapshot import TenantSnapshot


class SnapshotLRU:
    """One snapshot per tenant; installing past the budget evicts the least recently used."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._snapshots: OrderedDict[str, TenantSnapshot] = OrderedDict()
        self._bytes = 0

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def get(self, tenant: str) -> TenantSnapshot | None:
        return self._snapshots.get(tenant)

    def touch(self, tenant: str) -> None:
        self._snapshots.move_to_end(tenant)

    def install(self, tenant: str, snapshot: TenantSnapshot) -> list[str] | None:
        """Hold ``snapshot``; the tenants evicted to stay within the budget, or None when a
        newer snapshot is held already (generations only grow: a slow refresh must not replace
        a newer one)."""
        held = self._snapshots.get(tenant)
        if held is not None and held.generation > snapshot.generation:
            return None
        self.drop(tenant)
        self._snapshots[tenant] = snapshot
        self._bytes += snapshot.nbytes
        evicted = []
        while self._bytes > self.budget_bytes and self._snapshots:
            name, oldest = self._snapshots.popitem(last=False)
            self._bytes -= oldest.nbytes
            evicted.append(name)
        return evicted

    def drop(self, tenant: str) -> None:
        dropped = self._snapshots.pop(tenant, None)
        if dropped is not None:
            self._bytes -= dropped.nbytes

    def clear(self) -> None:
        self._snapshots.clear()
        self._bytes = 0
