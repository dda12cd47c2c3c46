"""A tenant's recency index, read as entries: the one walk list, bulk forget, export and the
lexicon's backfill share."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.model import IndexEntry, index_prefix, parse_index_key
from shared.storage.interfaces import ObjectStore


async def index_entries(
    objects: ObjectStore, tenant: str, *, page_size: int = 1000
) -> AsyncIterator[list[IndexEntry]]:
    """Every index key of ``tenant``, newest first, parsed, one listing of ``page_size`` keys at
    a time; keys that are not index keys are skipped, and a caller that stops stops the
    listing."""
    async for keys in objects.pages(index_prefix(tenant), page_size=page_size):
        yield [entry for entry in map(parse_index_key, keys) if entry is not None]


__all__ = ["index_entries"]
