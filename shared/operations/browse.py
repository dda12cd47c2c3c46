"""What is read of a tenant without a question: list_memories and memory_stats, and the memory
page's list, tenant chooser, access counts and download."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import msgspec

from shared.memories.cursor import cursor_position, make_cursor
from shared.memories.listing import ListFilter, Listing, StatsAnswer, listed, tally
from shared.memories.repairs import drop_orphan_keys
from shared.model import Memory
from shared.model.counters import AccessCount
from shared.operations.context import OperationsContext
from shared.storage import Stores, index_tenants
from shared.transfer import ExportedMemory, export_tenant


class ListPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a listing, newest first, and the cursor of the next one: None when no more
    memories match (the walk is complete)."""

    memories: list[Memory]
    next_cursor: str | None


async def list_page(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    *,
    match: ListFilter,
    limit: int,
    cursor: str | None = None,
) -> ListPage:
    """Up to ``limit`` memories ``match`` keeps, resuming where ``cursor`` says (made by an
    earlier page with the same filters): what list_memories and the memory page's list show.

    Raises:
        InvalidInputError: (``cursor``) not a cursor, or one made for other filters.
    """
    before = cursor_position(cursor, match) if cursor is not None else None
    # One more than shown says whether another page follows without a call that finds nothing.
    listing = await browse(ops, tenant, conversation, match=match, limit=limit + 1, before=before)
    shown = listing.memories[:limit]
    if len(listing.memories) > limit:
        resume: str | None = shown[-1].id
    else:
        resume = listing.resume_after  # a body filter stopped at its scan cap
    return ListPage(
        memories=shown, next_cursor=make_cursor(resume, match) if resume is not None else None
    )


async def browse(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    *,
    match: ListFilter,
    limit: int,
    before: str | None = None,
) -> Listing:
    """list_memories with every filter (``shared.memories.listing``), resuming after the
    memory ``before``: what the memory page's list view shows."""
    visibility = await ops.visibility(tenant, conversation)
    forgetting = await ops.deleter.forgetting(tenant)
    listing = await listed(
        ops.objects,
        ops.vectors,
        tenant,
        visibility,
        match=match,
        limit=limit,
        skip=forgetting,
        before=before,
    )
    await drop_orphan_keys(
        ops.objects, tenant, listing.bodiless, now_ms=ops.clock_ms(), lag_ms=ops.lag_ms
    )
    return listing


async def stats(ops: OperationsContext, tenant: str, conversation: str | None) -> StatsAnswer:
    visibility = await ops.visibility(tenant, conversation)
    forgetting = await ops.deleter.forgetting(tenant)
    return await tally(ops.objects, tenant, visibility, skip=forgetting)


async def access_counts(ops: OperationsContext, tenant: str) -> Mapping[str, AccessCount]:
    """How often each memory was returned by recall (approximate; see shared.counters)."""
    return await ops.counters.load(tenant)


async def tenants(ops: OperationsContext, *, limit: int) -> list[str]:
    """Up to ``limit`` tenants with a memory, in key order (the memory page's chooser)."""
    return await index_tenants(ops.objects, limit=limit)


def export(ops: OperationsContext, tenant: str) -> AsyncIterator[ExportedMemory]:
    """The whole tenant as ``mcp-memory export`` writes it (every conversation's notes).
    Raises InvalidInputError (``tenant``) when it has no memories."""
    stores = Stores(vectors=ops.vectors, objects=ops.objects, description="")
    return export_tenant(stores, tenant, now_ms=ops.clock_ms())
