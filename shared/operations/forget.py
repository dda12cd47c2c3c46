"""forget: one memory by id, or every memory a filter selects (counted until confirmed)."""

from __future__ import annotations

import logging

import msgspec

from shared.memories import entry_keys, memory_keys
from shared.memories.selection import BULK_FORGET_BATCH, ForgetFilter, matching_entries
from shared.memories.visibility import named_memory
from shared.model import iso_ms
from shared.operations.context import OperationsContext

logger = logging.getLogger(__name__)


class BulkForgetAnswer(msgspec.Struct, frozen=True, kw_only=True):
    matched: int
    deleted: int

    @property
    def remaining(self) -> int:
        return self.matched - self.deleted


async def forget(
    ops: OperationsContext, tenant: str, conversation: str | None, *, memory_id: str
) -> bool:
    """Delete one memory; False (and nothing deleted) when this caller cannot see it.

    A replaced version can be forgotten too (its id stays in memory_history). Forgetting a
    version deletes only it: the replacement records stay, so what it replaced stays
    retired, and a memory that replaced it stays current."""
    now_iso = iso_ms(ops.clock_ms())
    memory = await named_memory(
        ops.vectors, tenant, memory_id, conversation=conversation, now_iso=now_iso
    )
    if memory is None:
        return False
    await ops.deleter.delete(tenant, [memory_id], memory_keys(memory))
    return True


async def forget_matching(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    *,
    match: ForgetFilter,
    confirm: bool,
) -> BulkForgetAnswer:
    """Every memory this request can see that ``match`` selects, current or replaced;
    counted only unless ``confirm``, then the oldest ``BULK_FORGET_BATCH`` deleted."""
    visibility = await ops.visibility(tenant, conversation)
    forgetting = await ops.deleter.forgetting(tenant)
    matched = [
        entry
        for entry in await matching_entries(ops.objects, ops.vectors, tenant, visibility, match)
        if entry.memory_id not in forgetting
    ]
    if not confirm or not matched:
        return BulkForgetAnswer(matched=len(matched), deleted=0)
    batch = matched[:BULK_FORGET_BATCH]
    await ops.deleter.delete(tenant, [e.memory_id for e in batch], entry_keys(tenant, batch))
    logger.info("bulk_forget", extra={"tenant": tenant, "deleted": len(batch)})
    return BulkForgetAnswer(matched=len(matched), deleted=len(batch))
