"""Self-healing of the writes one memory is made of: its index key, its vector, and its lexicon
entry. Each is one request, written and deleted in the orders ``shared.memories.lifecycle``
keeps, and nothing makes them atomic, so a process killed between two leaves a memory
half-written:

- **a key without a vector** (killed during remember or forget): ``list_memories`` skips it, but
  ``memory_stats`` counts it. Deleted here.
- **a vector without a key** (written by 0.9 and 0.10, which wrote the vector first): the memory
  is recalled and answers "already known", yet is never listed or counted. Its key is derived
  from the memory itself and written here.
- **a lexicon entry missing or left over**: the memory is found by the vector leg only, or a
  keyword hit finds no body and is dropped. Corrected by one lexicon shard.

Only what is older than the lag is touched: a younger mismatch may be a write still in flight in
another process. Every repair is checked against the vector store once more just before it is
made, so a remember or forget racing the pass is not undone; whatever a race still gets wrong is
older than the lag by the next pass, and repaired then. The compactor runs this on a schedule;
the API repairs the two cases it meets on its own paths (``shared.memories.repairs``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Set

import msgspec

from shared.errors import ConflictError
from shared.lexical.segments import LexiconShard
from shared.lexical.stored import lexicon_documents
from shared.memories.repair_context import RepairContext
from shared.memories.repairs import settled
from shared.model import Memory, index_key, parse_index_key
from shared.model.keys import INDEX_ROOT

logger = logging.getLogger(__name__)


class TenantInventory(msgspec.Struct, frozen=True, kw_only=True):
    """What one pass found for one tenant: index keys by memory id, the vectors' ids, and the
    lexicon's documents (None while the tenant has no lexicon: its backfill reads the keys)."""

    keys: Mapping[str, str]
    vectors: Set[str]
    lexicon: Set[str] | None


class ReconcilePlan(msgspec.Struct, frozen=True, kw_only=True):
    restore_keys: tuple[str, ...] = ()  # memory ids whose vector has no key
    delete_keys: tuple[str, ...] = ()  # keys with no vector
    lexicon_add: tuple[str, ...] = ()  # memory ids the lexicon lacks
    lexicon_remove: tuple[str, ...] = ()  # lexicon documents with no vector

    @property
    def empty(self) -> bool:
        return not (
            self.restore_keys or self.delete_keys or self.lexicon_add or self.lexicon_remove
        )


def plan_reconcile(inventory: TenantInventory, *, now_ms: int, lag_ms: int) -> ReconcilePlan:
    """The repairs one tenant needs: every mismatch older than the lag (pure)."""

    def old(ids: Set[str]) -> tuple[str, ...]:
        return tuple(sorted(i for i in ids if settled(i, now_ms=now_ms, lag_ms=lag_ms)))

    keyed = set(inventory.keys)
    lexicon = inventory.lexicon
    return ReconcilePlan(
        restore_keys=old(inventory.vectors - keyed),
        delete_keys=tuple(inventory.keys[i] for i in old(keyed - inventory.vectors)),
        lexicon_add=old(inventory.vectors - lexicon) if lexicon is not None else (),
        lexicon_remove=old(lexicon - inventory.vectors) if lexicon is not None else (),
    )


class ReconcileResult(msgspec.Struct, frozen=True, kw_only=True):
    keys_restored: int = 0
    keys_deleted: int = 0
    lexicon_added: int = 0
    lexicon_removed: int = 0

    def __add__(self, other: ReconcileResult) -> ReconcileResult:
        return ReconcileResult(
            **{name: getattr(self, name) + getattr(other, name) for name in self.__struct_fields__}
        )

    @property
    def repairs(self) -> int:
        return sum(msgspec.structs.astuple(self))

    def log_fields(self) -> dict[str, int]:
        """The repairs as log lines name them (``reconciled``, ``compactor_job``)."""
        return {
            "keysRestored": self.keys_restored,
            "keysDeleted": self.keys_deleted,
            "lexiconAdded": self.lexicon_added,
            "lexiconRemoved": self.lexicon_removed,
        }


class Reconciler:
    """Repairs tenants on one pair of stores; lexicon repairs go out as this process's shards."""

    def __init__(self, context: RepairContext) -> None:
        self._context = context
        self._vectors = context.vectors
        self._objects = context.objects

    async def inventory(self) -> dict[str, tuple[dict[str, str], set[str]]]:
        """Every tenant with an index key or a vector: its keys by memory id, its vector ids.
        One listing of ``index/`` and one pass over the vector store serve every tenant."""
        found: dict[str, tuple[dict[str, str], set[str]]] = {}
        async for keys in self._objects.pages(INDEX_ROOT):
            for key in keys:
                entry = parse_index_key(key)
                tenant = key[len(INDEX_ROOT) :].split("/", 1)[0]
                if entry is not None and tenant:
                    found.setdefault(tenant, ({}, set()))[0][entry.memory_id] = key
        async for page in self._vectors.scan_ids():
            for ref in page:
                found.setdefault(ref.tenant, ({}, set()))[1].add(ref.memory_id)
        return found

    async def tenant(
        self, tenant: str, keys: Mapping[str, str], vectors: Set[str]
    ) -> ReconcileResult:
        """Repair one tenant from what ``inventory`` found for it.

        Raises:
            StorageError: a read or write failed; what was repaired before it stays repaired.
        """
        inventory = TenantInventory(
            keys=keys, vectors=vectors, lexicon=await lexicon_documents(self._objects, tenant)
        )
        plan = plan_reconcile(
            inventory, now_ms=self._context.clock_ms(), lag_ms=self._context.lag_ms
        )
        if plan.empty:
            return ReconcileResult()
        restored = await self._restore_keys(tenant, plan.restore_keys)
        deleted = await self._delete_keys(tenant, plan.delete_keys)
        added, removed = await self._correct_lexicon(tenant, plan)
        result = ReconcileResult(
            keys_restored=restored,
            keys_deleted=deleted,
            lexicon_added=added,
            lexicon_removed=removed,
        )
        if result.repairs:
            logger.info("reconciled", extra={"tenant": tenant, **result.log_fields()})
        return result

    async def _existing(self, tenant: str, ids: tuple[str, ...]) -> dict[str, Memory]:
        # One call: each store batches its own reads (GetVectors takes 100 keys at a time).
        return {memory.id: memory for memory in await self._vectors.get(tenant, ids)} if ids else {}

    async def _restore_keys(self, tenant: str, ids: tuple[str, ...]) -> int:
        memories = await self._existing(tenant, ids)
        restored: list[Memory] = []
        for memory in memories.values():
            try:
                await self._objects.put(index_key(memory), "", if_none_match=True)
            except ConflictError:
                continue  # another repairer (or a retried write) got there first
            restored.append(memory)
        # A forget between the read and the put would leave the key just written orphaned.
        still = await self._existing(tenant, tuple(m.id for m in restored))
        gone = [index_key(m) for m in restored if m.id not in still]
        if gone:
            await self._objects.delete(gone)
        return len(restored) - len(gone)

    async def _delete_keys(self, tenant: str, keys: tuple[str, ...]) -> int:
        entries = {e.memory_id: e.key for e in map(parse_index_key, keys) if e is not None}
        # A vector that appeared since the listing is a remember that stalled past the lag.
        alive = await self._existing(tenant, tuple(entries))
        orphaned = [key for memory_id, key in entries.items() if memory_id not in alive]
        if orphaned:
            await self._objects.delete(orphaned)
        return len(orphaned)

    async def _correct_lexicon(self, tenant: str, plan: ReconcilePlan) -> tuple[int, int]:
        added = await self._existing(tenant, plan.lexicon_add)
        alive = await self._existing(tenant, plan.lexicon_remove)
        removed = [memory_id for memory_id in plan.lexicon_remove if memory_id not in alive]
        if not added and not removed:
            return 0, 0
        found = LexiconShard.of(added.values())
        shard = LexiconShard(add=found.add, labels=found.labels, remove=removed)
        await self._context.write_lexicon(tenant, shard)
        return len(added), len(removed)
