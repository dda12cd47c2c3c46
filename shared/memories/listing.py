"""Which memories list shows, newest first: index keys decide first (type, conversation, expiry
and retirement are all readable from a key), then bodies, for what only a body says (category,
tag). list_memories and the memory page both walk it, so a page of the inspector and the tool
agree on what a tenant holds."""

from __future__ import annotations

from typing import Final

import msgspec

from shared.errors import InvalidInputError
from shared.memories.visibility import Visibility
from shared.model import (
    MAX_ULID_TIME_MS,
    MEMORY_TYPES,
    IndexEntry,
    Memory,
    MemoryType,
    index_prefix,
    inverted_time,
    parse_index_key,
    ulid_time_ms,
)
from shared.storage import ObjectStore, VectorStore, index_entries

LIST_PAGE_SIZE: Final = 1000
# With a category or tag filter, bodies are read this many at a time...
BODY_BATCH: Final = 200
# ...and one call reads at most this many before it stops and says where it stopped.
BODY_SCAN_CAP: Final = 5000
# memory_stats counts at most this many index keys, and says so when it stopped there.
STATS_SCAN_CAP: Final = 10_000


class ListFilter(msgspec.Struct, frozen=True, kw_only=True):
    """What a listing keeps; every field set must hold. ``notes_only``: conversation-scoped
    notes only (those of the asking conversation: no other conversation's are visible).
    ``stored_after`` (inclusive) and ``stored_before`` (exclusive), in epoch milliseconds, bound
    the time a memory was stored, the time its id carries: the index keys are ordered by it, so
    the walk starts at ``stored_before`` and ends at ``stored_after`` without reading past."""

    memory_type: MemoryType | None = None
    category: str | None = None
    tag: str | None = None
    notes_only: bool = False
    stored_after: int | None = None
    stored_before: int | None = None

    def __post_init__(self) -> None:
        after, before = self.stored_after, self.stored_before
        if after is not None and before is not None and after >= before:
            raise InvalidInputError(
                "stored_after",
                "`stored_after` must be earlier than `stored_before`: memories stored at or "
                "after `stored_after` and before `stored_before` are listed, and none can be both",
            )

    @property
    def needs_bodies(self) -> bool:
        return self.category is not None or self.tag is not None

    def keeps_entry(self, entry: IndexEntry) -> bool:
        if self.memory_type is not None and entry.memory_type != self.memory_type:
            return False
        return not self.notes_only or entry.conversation_digest is not None

    def keeps(self, memory: Memory) -> bool:
        if self.category is not None and memory.category != self.category:
            return False
        return self.tag is None or self.tag in memory.tags


class Listing(msgspec.Struct, frozen=True, kw_only=True):
    """The memories kept, newest first; ``resume_after``: the id after which the walk would go
    on when it stopped at ``BODY_SCAN_CAP`` rather than at the limit or the end (else None);
    ``bodiless``: index entries whose memory was not found (a crash's leftovers)."""

    memories: list[Memory]
    resume_after: str | None = None
    bodiless: list[IndexEntry] = msgspec.field(default_factory=list)


class StatsAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``created``: each counted memory's creation time and type, for a picture over time."""

    by_type: dict[str, int]
    capped: bool
    created: tuple[tuple[int, MemoryType], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.by_type.values())


async def tally(
    objects: ObjectStore, tenant: str, visibility: Visibility, *, skip: frozenset[str]
) -> StatsAnswer:
    """The memories this request sees, by type, counted from their index keys alone (up to
    ``STATS_SCAN_CAP`` keys); ``skip``: ids being forgotten."""
    keys = await objects.list(index_prefix(tenant), limit=STATS_SCAN_CAP)
    by_type = dict.fromkeys(MEMORY_TYPES, 0)
    created: list[tuple[int, MemoryType]] = []
    for key in keys:
        entry = parse_index_key(key)
        if entry is not None and visibility.sees_entry(entry) and entry.memory_id not in skip:
            by_type[entry.memory_type] += 1
            created.append((ulid_time_ms(entry.memory_id) or 0, entry.memory_type))
    # The cap is judged on keys scanned, so a total thinned by other threads is flagged too.
    return StatsAnswer(
        by_type={t: n for t, n in by_type.items() if n},
        capped=len(keys) >= STATS_SCAN_CAP,
        created=tuple(created),
    )


def position_after(tenant: str, memory_id: str) -> str | None:
    """The listing position just past a memory's index key (keys go ``<stamp>#<id>#<type>…``
    and ``~`` sorts after every type), so a page can resume after its last memory; None when
    ``memory_id`` is not an id."""
    created_ms = ulid_time_ms(memory_id)
    if created_ms is None:
        return None
    return f"{index_prefix(tenant)}{inverted_time(created_ms)}#{memory_id.upper()}#~"


def clamped_ms(ms: int) -> int:
    """A time within what an id can carry (1970 to the year 10889): a bound before or after
    every memory means the same there, and prints as a date."""
    return min(max(ms, 0), MAX_ULID_TIME_MS)


def position_before(tenant: str, stored_ms: int) -> str:
    """The listing position just past every key stored at ``stored_ms`` or later (``~`` sorts
    after every id): where a walk of memories stored before it starts."""
    return f"{index_prefix(tenant)}{inverted_time(clamped_ms(stored_ms))}#~"


def _start(tenant: str, match: ListFilter, before: str | None) -> str | None:
    """Where the walk starts: past the memory ``before`` and past ``stored_before``, whichever
    is further on (the keys are newest first, so the greater key)."""
    positions = [position_after(tenant, before) if before is not None else None]
    if match.stored_before is not None:
        positions.append(position_before(tenant, match.stored_before))
    given = [p for p in positions if p is not None]
    return max(given) if given else None


async def _walk(
    objects: ObjectStore,
    tenant: str,
    visibility: Visibility,
    match: ListFilter,
    *,
    want: int,
    skip: frozenset[str],
    start_after: str | None,
) -> tuple[list[IndexEntry], str | None]:
    """Up to ``want`` entries this request sees and ``match`` keeps by key, and the key to
    resume after (None: the index is exhausted)."""
    # Without a filter nearly every key is kept, so pages of `want` keys are read; a type filter
    # or another thread's notes can thin a page a lot, so then pages of 1,000.
    thinning = (
        match.memory_type is not None or match.notes_only or visibility.conversation is not None
    )
    page_size = LIST_PAGE_SIZE if thinning else want
    # Past this position every key was stored before ``stored_after``: the walk ends there.
    end = None if match.stored_after is None else position_before(tenant, match.stored_after)
    kept: list[IndexEntry] = []
    async for entries in index_entries(
        objects, tenant, page_size=page_size, start_after=start_after
    ):
        for entry in entries:
            if end is not None and entry.key > end:
                return kept, None
            if entry.memory_id in skip or not visibility.sees_entry(entry):
                continue
            if match.keeps_entry(entry):
                kept.append(entry)
                if len(kept) == want:
                    return kept, entry.key
    return kept, None


async def listed(
    objects: ObjectStore,
    vectors: VectorStore,
    tenant: str,
    visibility: Visibility,
    *,
    match: ListFilter,
    limit: int,
    skip: frozenset[str],
    before: str | None = None,
) -> Listing:
    """Up to ``limit`` memories ``match`` keeps, newest first, older than the memory ``before``
    when given; ``skip``: ids being forgotten."""
    memories: list[Memory] = []
    bodiless: list[IndexEntry] = []
    position = _start(tenant, match, before)
    scanned = 0
    while len(memories) < limit:
        remaining = limit - len(memories)
        want = max(remaining, BODY_BATCH) if match.needs_bodies else remaining
        entries, position = await _walk(
            objects, tenant, visibility, match, want=want, skip=skip, start_after=position
        )
        if not entries:
            break
        found = {m.id: m for m in await vectors.get(tenant, [e.memory_id for e in entries])}
        for entry in entries:
            memory = found.get(entry.memory_id)
            if memory is None:
                bodiless.append(entry)
            elif visibility.sees(memory) and match.keeps(memory):
                memories.append(memory)
                if len(memories) == limit:
                    return Listing(memories=memories, bodiless=bodiless)
        scanned += len(entries)
        if position is None:
            break
        if scanned >= BODY_SCAN_CAP:
            return Listing(memories=memories, resume_after=entries[-1].memory_id, bodiless=bodiless)
    return Listing(memories=memories, bodiless=bodiless)
