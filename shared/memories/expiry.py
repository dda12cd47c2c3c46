"""Deleting expired memories: the compactor's expiry job.

An expired memory is invisible from the moment it expires, in every process, whether or not
this runs (recall, list, stats and dedup compare its expiry with their clock). This is storage
hygiene: it deletes the vector, the lexicon entry, the index key and the replacement records
that name the memory as the replaced (or probably updated) one
(``shared.memories.delete_memories``, the order a
forget deletes in), then the ``expiry/`` key, which is what makes a run that died part-way safe
to repeat. Records where the expired memory is the replacement stay:
what it corrected stays retired.

``expiry/`` keys sort by time across tenants, so one listing from the start finds everything
due and stops at the first key still in the future: a run costs O(due / 1000) list requests.
"""

from __future__ import annotations

import logging
from typing import Final

import msgspec

from shared.memories.deleting import delete_memories
from shared.memories.repair_context import RepairContext
from shared.model import index_key
from shared.model.keys import EXPIRY_ROOT, ExpiryEntry, link_key, parse_expiry_key, replaced_key
from shared.revisions import Replacements, read_replacements
from shared.storage.interfaces import ObjectStore

logger = logging.getLogger(__name__)

# Memories deleted per tenant per batch: one GetVectors of 100 is the S3 ceiling, and the
# store batches bigger reads itself.
DELETE_BATCH: Final = 500


class ExpiryResult(msgspec.Struct, frozen=True, kw_only=True):
    tenants: int = 0
    tenants_failed: int = 0
    deleted: int = 0
    due: int = 0


async def due_entries(objects: ObjectStore, *, now_ms: int) -> list[ExpiryEntry]:
    """Every expiry key due by ``now_ms``, soonest first."""
    due: list[ExpiryEntry] = []
    async for keys in objects.pages(EXPIRY_ROOT):
        for key in keys:
            entry = parse_expiry_key(key)
            if entry is None:
                continue
            if entry.expires_ms > now_ms:
                return due
            due.append(entry)
    return due


class Expirer:
    """Deletes what has expired; lexicon removals go out as this process's shards."""

    def __init__(self, context: RepairContext) -> None:
        self._context = context

    async def run(self) -> ExpiryResult:
        """One pass over everything due; a failing tenant is logged and skipped.

        Raises:
            StorageError: the listing itself failed (nothing was deleted).
        """
        due = await due_entries(self._context.objects, now_ms=self._context.clock_ms())
        by_tenant: dict[str, list[ExpiryEntry]] = {}
        for entry in due:
            by_tenant.setdefault(entry.tenant, []).append(entry)
        deleted = failed = 0
        for tenant, entries in sorted(by_tenant.items()):
            try:
                replacements = await read_replacements(self._context.objects, tenant)
                for start in range(0, len(entries), DELETE_BATCH):
                    batch = entries[start : start + DELETE_BATCH]
                    deleted += await self._expire(tenant, batch, replacements)
            except Exception:
                # One tenant's broken object or a transient error must not starve the others.
                failed += 1
                logger.exception("compactor_expiry_failed", extra={"tenant": tenant})
        return ExpiryResult(
            tenants=len(by_tenant), tenants_failed=failed, deleted=deleted, due=len(due)
        )

    async def _expire(
        self, tenant: str, entries: list[ExpiryEntry], replacements: Replacements
    ) -> int:
        """Delete one batch of a tenant's due memories; how many vectors were deleted.
        ``replacements``: the tenant's records, listed once for all its batches."""
        context = self._context
        now_ms = context.clock_ms()
        ids = [entry.memory_id for entry in entries]
        found = {m.id: m for m in await context.vectors.get(tenant, ids)}
        # The expiry key and the memory say the same time unless the memory was damaged: only
        # a memory that is itself expired is deleted.
        doomed = [m for m in found.values() if m.expires_at is not None and m.expired_by(now_ms)]
        doomed_ids = [m.id for m in doomed]
        gone = [memory_id for memory_id in ids if memory_id not in found or memory_id in doomed_ids]
        records = [
            replaced_key(tenant, memory_id, new_id)
            for memory_id in gone
            for new_id in replacements.successors(memory_id)
        ]
        records += [
            link_key(tenant, old_id, new_id, kind)
            for memory_id in gone
            for old_id, new_id, kind in replacements.link_records(memory_id)
        ]
        keys = [index_key(m) for m in doomed] + records
        await delete_memories(
            context.objects,
            context.vectors,
            context.remove_from_lexicon,
            tenant,
            doomed_ids,
            keys,
            cleanup_failures_raise=True,
        )
        # Last: a run that died before this finds the same keys due and finishes the job. A
        # memory whose own record says it has not expired (damaged metadata) is kept, and its
        # key goes too: the memory's record is what visibility reads.
        await context.objects.delete([e.key for e in entries])
        if doomed_ids:
            logger.info("memories_expired", extra={"tenant": tenant, "memories": len(doomed_ids)})
        return len(doomed_ids)
