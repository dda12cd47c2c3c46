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
) -> list[Candidate]:
    """The vector leg's ``hits`` and the keyword leg fused, with the bodies of the keyword-only
    hits that could be returned fetched; what this request may not see is dropped from both (a
    keyword hit may be a memory the vector leg never returned: another conversation's, expired
    or retired).

    The first fusion's best visible memories are then the keyword leg's feedback
    (``shared.lexical.feedback``): the terms they share rescore these candidates, which are
    fused again; nothing is searched or fetched a second time."""
    visible = [hit for hit in hits if sight.sees(hit.memory)]
    keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=[hit.memory.id for hit in visible])
    first = fuse(visible, keyword, floor=floor)
    candidates = await _kept(vectors, snapshots, tenant, sight, first, floor=floor, limit=limit)
    return with_feedback(candidates, scored, floor=floor)


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
