"""Which memories a bulk forget selects: index keys first (type, conversation, age and expiry
are all in the key), bodies only when the filter needs them (category, tag)."""

from __future__ import annotations

from typing import Final

from shared.memories.listing import LIST_PAGE_SIZE, ListFilter
from shared.memories.visibility import Visibility
from shared.model import DAY_MS, IndexEntry, ulid_time_ms
from shared.storage import ObjectStore, VectorStore, index_entries

# Bodies read per request when a bulk filter needs them (category, tag).
BODY_BATCH: Final = 500
# A bulk forget deletes at most this many per call and says how many remain.
BULK_FORGET_BATCH: Final = 1000


class ForgetFilter(ListFilter, frozen=True, kw_only=True):
    """What a bulk forget matches: what a listing keeps (``notes_only``: the tool's
    ``conversation_only``), and an age; every field set must hold (an empty filter is refused
    by the tool before it gets here)."""

    older_than_days: int | None = None


async def matching_entries(
    objects: ObjectStore,
    vectors: VectorStore,
    tenant: str,
    visibility: Visibility,
    match: ForgetFilter,
) -> list[IndexEntry]:
    """The index entries ``match`` selects, oldest first. Replaced versions are included
    (forgetting a subject forgets its history); expired ones are already gone."""
    cutoff_ms = (
        visibility.now_ms - match.older_than_days * DAY_MS
        if match.older_than_days is not None
        else None
    )
    entries: list[IndexEntry] = []
    async for page in index_entries(objects, tenant, page_size=LIST_PAGE_SIZE):
        for entry in page:
            if not entry.visible_to(visibility.conversation):
                continue
            if entry.expired(visibility.now_ms) or not match.keeps_entry(entry):
                continue
            if cutoff_ms is not None:
                created_ms = ulid_time_ms(entry.memory_id)
                if created_ms is None or created_ms > cutoff_ms:
                    continue
            entries.append(entry)
    entries.reverse()  # the index is newest first
    if match.needs_bodies:
        entries = await _with_bodies_matching(vectors, tenant, entries, match)
    return entries


async def _with_bodies_matching(
    vectors: VectorStore, tenant: str, entries: list[IndexEntry], match: ForgetFilter
) -> list[IndexEntry]:
    kept: list[IndexEntry] = []
    for start in range(0, len(entries), BODY_BATCH):
        chunk = entries[start : start + BODY_BATCH]
        found = {m.id: m for m in await vectors.get(tenant, [e.memory_id for e in chunk])}
        for entry in chunk:
            memory = found.get(entry.memory_id)
            if memory is not None and match.keeps(memory):
                kept.append(entry)
    return kept
