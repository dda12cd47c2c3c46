"""Recall's candidates: the vector leg's hits and the keyword leg's fused, with the bodies of
the keyword-only hits that could be returned, and what the request may not see dropped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from shared.lexical import KeywordQuery
from shared.memories.visibility import Visibility
from shared.model import Hit, Memory
from shared.ranking import Candidate, fuse, names_held, passes_floor, with_feedback
from shared.storage import VectorStore
from shared.storage.interfaces import Snapshots

# The store is asked for the nearest hundred; visibility is applied to what comes back.
RECALL_CANDIDATES: Final = 100
# The keyword leg's own best, over all of the tenant's memories, beside the vector's hundred.
KEYWORD_CANDIDATES: Final = 100
# How deep, in multiples of the limit, keyword-only hits are worth fetching.
FETCH_WINDOW: Final = 3


class Gathered(msgspec.Struct, frozen=True, kw_only=True):
    """Recall's candidates, the probable updates among them (old id → newer ids), and how many
    memories the two legs compared (before newer versions were brought in)."""

    candidates: list[Candidate]
    links: dict[str, tuple[str, ...]]
    compared: int


async def recall_candidates(
    vectors: VectorStore,
    snapshots: Snapshots | None,
    tenant: str,
    sight: Visibility,
    hits: list[Hit],
    scored: KeywordQuery,
    *,
    floor: float,
    limit: int,
) -> Gathered:
    """The vector leg's ``hits`` and the keyword leg fused, with the bodies of the keyword-only
    hits that could be returned fetched; what this request may not see is dropped from both (a
    keyword hit may be a memory the vector leg never returned: another conversation's, expired
    or retired).

    The first fusion's best visible memories are then the keyword leg's feedback
    (``shared.lexical.feedback``): the terms they share rescore these candidates, which are
    fused again; nothing is searched or fetched a second time. Last, the newer versions of the
    candidates that probable updates link are brought in (``newer_versions``)."""
    visible = [hit for hit in hits if sight.sees(hit.memory)]
    keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=[hit.memory.id for hit in visible])
    first = fuse(visible, keyword, floor=floor)
    candidates = await _kept(vectors, snapshots, tenant, sight, first, floor=floor, limit=limit)
    fed_back = with_feedback(candidates, scored, floor=floor)
    found, links = await newer_versions(vectors, snapshots, tenant, sight, fed_back, limit=limit)
    return Gathered(candidates=found, links=links, compared=len(fed_back))


async def _kept(
    vectors: VectorStore,
    snapshots: Snapshots | None,
    tenant: str,
    sight: Visibility,
    fused: list[Candidate],
    *,
    floor: float,
    limit: int,
) -> list[Candidate]:
    """The candidates that may be returned, with their memories. Only keyword-only hits among
    the first ``limit × FETCH_WINDOW`` (names held, then relevance) can be returned: the
    tie-break moves a result by at most a tenth of the floor, and the newer-first rule only
    reorders what is returned."""
    # In the order rank puts them: the query's names held first, then relevance.
    passing = sorted(
        (c for c in fused if passes_floor(c, floor=floor)),
        key=lambda c: (names_held(c), c.relevance),
        reverse=True,
    )
    wanted = [
        c.memory_id
        for c in passing[: limit * FETCH_WINDOW]
        if c.memory is None and not sight.replacements.retired(c.memory_id)
    ]
    found = await _bodies(vectors, snapshots, tenant, wanted) if wanted else {}
    candidates = []
    for candidate in fused:
        memory = candidate.memory or found.get(candidate.memory_id)
        if memory is not None and sight.sees(memory):
            candidates.append(
                candidate
                if candidate.memory is not None
                else msgspec.structs.replace(candidate, memory=memory)
            )
    return candidates


async def _bodies(
    vectors: VectorStore, snapshots: Snapshots | None, tenant: str, ids: Sequence[str]
) -> dict[str, Memory]:
    """The memories of keyword-only hits: from ``Stores.snapshots`` where the backend keeps
    them (as fresh as this recall's query), else read."""
    held = snapshots.memories(tenant, ids) if snapshots is not None else []
    found = {memory.id: memory for memory in held}
    missing = [memory_id for memory_id in ids if memory_id not in found]
    if missing:
        found.update((memory.id, memory) for memory in await vectors.get(tenant, missing))
    return found


async def newer_versions(
    vectors: VectorStore,
    snapshots: Snapshots | None,
    tenant: str,
    sight: Visibility,
    candidates: list[Candidate],
    *,
    limit: int,
) -> tuple[list[Candidate], dict[str, tuple[str, ...]]]:
    """The ``candidates`` with the newer versions of the ones that could be returned (the
    first ``limit × FETCH_WINDOW`` by relevance) brought in, and the probable updates among
    them (old id → newer ids). A newer version is its link's newer memory, or what replaced it
    since; one this request may not see (another conversation's note, forgotten, expired) is no
    version here. A version brought in stands where its older one does (its relevance, with
    none of the query's words shown as matched): it is what that memory says now."""
    links: dict[str, tuple[str, ...]] = {}
    for candidate in candidates:
        newer = sight.replacements.superseded_by(candidate.memory_id)
        if newer:
            current = {c for n in newer for c in sight.replacements.current(n)}
            links[candidate.memory_id] = tuple(sorted(current - {candidate.memory_id}))
    if not links:
        return candidates, {}
    held = {c.memory_id: c for c in candidates}
    best = sorted(candidates, key=lambda c: c.relevance, reverse=True)[: limit * FETCH_WINDOW]
    wanted = {n for c in best for n in links.get(c.memory_id, ()) if n not in held}
    found = await _bodies(vectors, snapshots, tenant, sorted(wanted)) if wanted else {}
    brought = []
    for older in best:
        for newer_id in links.get(older.memory_id, ()):
            memory = found.pop(newer_id, None)
            if memory is not None and sight.sees(memory):
                brought.append(_standing_for(older, memory))
    shown = held.keys() | {c.memory_id for c in brought}
    linked = {
        old: kept for old, newer in links.items() if (kept := tuple(n for n in newer if n in shown))
    }
    return [*candidates, *brought], linked


def _standing_for(older: Candidate, memory: Memory) -> Candidate:
    keyword = older.keyword
    return msgspec.structs.replace(
        older,
        memory_id=memory.id,
        memory=memory,
        keyword=msgspec.structs.replace(keyword, memory_id=memory.id, matched=())
        if keyword is not None
        else None,
    )
