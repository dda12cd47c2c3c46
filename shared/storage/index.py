"""A tenant's recency index, read as entries: the one walk list, bulk forget, export and the
lexicon's backfill share; and which tenants have one."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.model import IndexEntry, index_prefix, parse_index_key
from shared.model.keys import INDEX_ROOT
from shared.storage.interfaces import ObjectStore


async def index_entries(
    objects: ObjectStore, tenant: str, *, page_size: int = 1000, start_after: str | None = None
) -> AsyncIterator[list[IndexEntry]]:
    """Every index key of ``tenant``, newest first, parsed, one listing of ``page_size`` keys at
    a time; keys that are not index keys are skipped, and a caller that stops stops the
    listing. ``start_after``: a key (or a position between keys) to resume after."""
    async for keys in objects.pages(
        index_prefix(tenant), page_size=page_size, start_after=start_after
    ):
        yield [entry for entry in map(parse_index_key, keys) if entry is not None]


async def index_tenants(objects: ObjectStore, *, limit: int) -> list[str]:
    """Up to ``limit`` tenants with at least one index key, in the order of their keys (the
    name and a ``/``: ``t-2`` and ``t.x`` come before ``t``).

    One listing of one key per tenant, whatever its size: after each tenant found, the next
    listing starts past all of its keys (``index/<t>0`` sorts after every ``index/<t>/…``, as
    ``0`` follows ``/``, and a tenant name holds no ``/``)."""
    found: list[str] = []
    start_after: str | None = None
    while len(found) < limit:
        keys = await objects.list(INDEX_ROOT, limit=1, start_after=start_after)
        if not keys:
            break
        tenant = keys[0][len(INDEX_ROOT) :].split("/", 1)[0]
        found.append(tenant)
        start_after = f"{INDEX_ROOT}{tenant}0"
    return found
