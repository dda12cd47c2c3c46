"""recall: a question answered from memory. The whole pipeline reads top to bottom in
:func:`recall`; the arithmetic of each step is pure and lives in ``shared.ranking``.

1. Search: the question is embedded and the vector leg asks the store for its nearest hundred;
   beside the embedding run the reads that do not need the vector (the access counts, the
   keyword leg's scores, the replacement records). What the request may not see is dropped.
2. Fuse (``shared.operations.fusion``): both legs into one relevance per candidate, and the bodies
   of the keyword-only hits that could be returned fetched (``kept``); a keyword hit may be a
   memory the vector leg never returned (another conversation's, expired or retired).
3. Feedback (``shared.lexical.feedback``): the first fusion's best memories are taken as
   relevant; the terms they share rescore the candidates that could still reach the answer
   (``reranked``), which are fused again. Nothing is searched or fetched a second time.
4. Newer versions: the memories that probably update a candidate are brought in
   (``newer_versions``), so a stale fact is answered beside what it says now.
5. Rank (``shared.ranking.score``): the floor, confidence, names first, newer first, the limit.
   A confident answer counts as a use of each memory it returns.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
from collections.abc import Mapping
from typing import Final

import msgspec

from shared.lexical import KeywordQuery
from shared.memories.visibility import Visibility
from shared.model import Hit, Memory
from shared.model.counters import AccessCount
from shared.operations.context import OperationsContext
from shared.operations.fusion import fuse, with_feedback
from shared.ranking import (
    MODE_PROFILES,
    Candidate,
    RecallMode,
    RecallOutcome,
    passes_floor,
    rank,
    rank_order,
)

# The store is asked for the nearest hundred; visibility is applied to what comes back.
RECALL_CANDIDATES: Final = 100
# The keyword leg's own best, over all of the tenant's memories, beside the vector's hundred.
KEYWORD_CANDIDATES: Final = 100
# How deep, in multiples of the limit, keyword-only hits are worth fetching.
FETCH_WINDOW: Final = 3
# How deep, in multiples of the limit, the first fusion's candidates go on to the feedback, the
# newer versions and the ranking. The feedback reorders what was found; below this depth it
# never lifted a candidate into an answer on any set (bench/ablation.py reads the same), and
# every candidate carried on costs each later step its share.
RERANK_WINDOW: Final = 10


class RecallAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``visible`` is how many candidates this conversation may see at all (0: nothing stored)."""

    mode: RecallMode
    visible: int
    outcome: RecallOutcome | None


async def recall(
    ops: OperationsContext,
    tenant: str,
    conversation: str | None,
    *,
    query: str,
    mode: RecallMode,
    limit: int,
    count_use: bool = True,
) -> RecallAnswer:
    """Both legs, fused and ranked; ``count_use``: see ``_count_uses``."""
    hits, counts, scored, visibility = await _searched(ops, tenant, conversation, query)
    visible = [hit for hit in hits if visibility.sees(hit.memory)]
    keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=[hit.memory.id for hit in visible])
    first = fuse(visible, keyword, floor=ops.floor)
    candidates = await kept(ops, tenant, visibility, first, limit=limit)
    if not candidates:
        return RecallAnswer(mode=mode, visible=0, outcome=None)
    compared = len(candidates)
    fed_back = with_feedback(reranked(candidates, limit=limit), scored, floor=ops.floor)
    found, links = await newer_versions(ops, tenant, visibility, fed_back, limit=limit)
    relations = ops.relations.reading(query) if ops.relations is not None else None
    ranked = functools.partial(
        rank,
        found,
        counts,
        profile=MODE_PROFILES[mode],
        limit=limit,
        floor=ops.floor,
        high_similarity=ops.high_similarity,
        now_ms=visibility.now_ms,
        names_absent=scored.absent_names > 0,
        links=links,
        relations=relations,
    )
    outcome = ranked()
    # Ranking is pure: facts it asked the model about and that were not read yet are read now,
    # and the answer ranked again with them.
    if relations is not None and await relations.read_unread():
        outcome = ranked()
    if count_use:
        _count_uses(ops, tenant, outcome, now_ms=visibility.now_ms)
    # How many memories the two legs compared, before newer versions were brought in.
    return RecallAnswer(mode=mode, visible=compared, outcome=outcome)


async def _searched(
    ops: OperationsContext, tenant: str, conversation: str | None, query: str
) -> tuple[list[Hit], Mapping[str, AccessCount], KeywordQuery, Visibility]:
    """The vector leg's hits in ``conversation``, the access counts, the keyword leg's scores,
    and what the request may see now."""
    embedding = ops.start_question_embedding(query)
    # Neither the counters nor the keyword scoring depend on the vector: both run while the
    # query is embedded (the model runs on its own thread), so a cold read of either (once
    # a minute per tenant) hides behind that latency.
    loading = asyncio.create_task(ops.counters.load(tenant))
    scoring = asyncio.create_task(_scored(ops, tenant, query))
    retiring = asyncio.create_task(ops.replacements.view(tenant))
    try:
        visible = await ops.visible_hits(tenant, conversation, embedding, top_k=RECALL_CANDIDATES)
    finally:
        # Never left dangling: awaited whether the search succeeded or not.
        loaded, scored, retired = await asyncio.gather(
            loading, scoring, retiring, return_exceptions=True
        )
    if isinstance(loaded, BaseException):
        raise loaded
    if isinstance(scored, BaseException):
        raise scored
    if isinstance(retired, BaseException):
        raise retired
    visibility = Visibility(conversation, now_ms=ops.clock_ms(), replacements=retired)
    return visible, loaded, scored, visibility


async def _scored(ops: OperationsContext, tenant: str, query: str) -> KeywordQuery:
    """The keyword leg's scores, with its own best hits worked out while the query is still
    being embedded (``result`` reuses them)."""
    scored = await ops.lexicon.query(tenant, query)
    scored.best(KEYWORD_CANDIDATES)
    return scored


def _count_uses(
    ops: OperationsContext, tenant: str, outcome: RecallOutcome, *, now_ms: int
) -> None:
    """Only a confident answer counts as a use: a memory returned as the best of weak
    matches for unrelated questions must not climb for the next unrelated one. Nor is a
    person reading the ranking (the memory page, ``count_use`` False) a use of a memory."""
    for ranked in outcome.results:
        if ranked.strong:
            ops.counters.record(tenant, ranked.memory.id, at_ms=now_ms)


async def kept(
    ops: OperationsContext,
    tenant: str,
    visibility: Visibility,
    fused: list[Candidate],
    *,
    limit: int,
) -> list[Candidate]:
    """The candidates that may be returned, with their memories: ``fused`` of the hits
    ``visibility`` let through, so only the keyword-only ones are checked. Only those among
    the first ``limit × FETCH_WINDOW`` (names held, then relevance) can be returned: the
    tie-break moves a result by at most a tenth of the floor, and the newer-first rule only
    reorders what is returned."""
    # In the order rank puts them: the query's names held first, then relevance (nlargest
    # keeps what a stable sort would, ties included).
    passing = heapq.nlargest(
        limit * FETCH_WINDOW,
        (c for c in fused if passes_floor(c, floor=ops.floor)),
        key=rank_order,
    )
    wanted = [
        c.memory_id
        for c in passing
        if c.memory is None and not visibility.replacements.retired(c.memory_id)
    ]
    found = await ops.bodies(tenant, wanted) if wanted else {}
    candidates = []
    for candidate in fused:
        if candidate.memory is not None:
            # The vector leg's, already seen through ``visibility`` in ``recall``.
            candidates.append(candidate)
            continue
        memory = found.get(candidate.memory_id)
        if memory is not None and visibility.sees(memory):
            candidates.append(msgspec.structs.replace(candidate, memory=memory))
    return candidates


def reranked(candidates: list[Candidate], *, limit: int) -> list[Candidate]:
    """The ``candidates`` that go on to the feedback and the ranking, in their own order: the
    first ``limit × RERANK_WINDOW`` in the order rank puts them (names held, then relevance)."""
    depth = limit * RERANK_WINDOW
    if len(candidates) <= depth:
        return candidates
    best = heapq.nlargest(depth, candidates, key=rank_order)
    going_on = {c.memory_id for c in best}
    return [c for c in candidates if c.memory_id in going_on]


async def newer_versions(
    ops: OperationsContext,
    tenant: str,
    visibility: Visibility,
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
        newer = visibility.replacements.superseded_by(candidate.memory_id)
        if newer:
            current = {c for n in newer for c in visibility.replacements.current(n)}
            links[candidate.memory_id] = tuple(sorted(current - {candidate.memory_id}))
    if not links:
        return candidates, {}
    held = {c.memory_id: c for c in candidates}
    best = sorted(candidates, key=lambda c: c.relevance, reverse=True)[: limit * FETCH_WINDOW]
    wanted = {n for c in best for n in links.get(c.memory_id, ()) if n not in held}
    found = await ops.bodies(tenant, sorted(wanted)) if wanted else {}
    brought = []
    for older in best:
        for newer_id in links.get(older.memory_id, ()):
            memory = found.pop(newer_id, None)
            if memory is not None and visibility.sees(memory):
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
