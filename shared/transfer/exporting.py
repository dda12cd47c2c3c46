"""Export: every memory of a tenant, streamed as records, with its replacement records and its
access counts. Expired memories are left out (they are gone for every reader already)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.counters.fold import total_counts
from shared.counters.reader import read_tenant
from shared.errors import InvalidInputError
from shared.model import iso_ms
from shared.model.keys import INDEX_ROOT
from shared.revisions import read_replacements
from shared.storage import ObjectStore, Stores, index_entries
from shared.transfer.records import ExportedMemory, exported


async def tenants(objects: ObjectStore) -> list[str]:
    """Every tenant with at least one index key, in byte order (one pass over ``index/``)."""
    found: list[str] = []
    async for keys in objects.pages(INDEX_ROOT):
        for key in keys:
            tenant = key[len(INDEX_ROOT) :].split("/", 1)[0]
            if tenant and (not found or found[-1] != tenant):
                found.append(tenant)
    return found


async def export_tenant(
    stores: Stores, tenant: str, *, now_ms: int, named: bool = True
) -> AsyncIterator[ExportedMemory]:
    """The tenant's memories, newest first, one page of index keys at a time. ``named``: the
    operator named the tenant (a typo is refused); a tenant found by ``tenants`` whose keys are
    all unreadable or expired yields nothing instead, so ``--all`` goes on to the next.

    Raises:
        InvalidInputError: a named tenant has no memories (``tenant``, naming it).
    """
    replacements = await read_replacements(stores.objects, tenant)
    counters = await read_tenant(stores.objects, tenant)
    counts = total_counts(counters.merged, counters.shards)
    now_iso = iso_ms(now_ms)
    seen = 0
    async for entries in index_entries(stores.objects, tenant):
        found = {m.id: m for m in await stores.vectors.get(tenant, [e.memory_id for e in entries])}
        for entry in entries:
            memory = found.get(entry.memory_id)
            seen += 1
            if memory is None or memory.expired(now_iso):
                continue  # a key a crash left without its body, or expired
            yield exported(
                memory,
                replaced_by=replacements.replaced_by(memory.id),
                counts=counts.get(memory.id),
                superseded_by=replacements.superseded_by(memory.id),
            )
    if not seen and named:
        raise InvalidInputError("tenant", f"unknown tenant {tenant!r}: it has no memories")
