"""Fusion of the two legs into one relevance per candidate: pure arithmetic, no I/O.

relevance = cosine + KEYWORD_WEIGHT × floor × (BM25 / spread)

- The vector leg's cosine is kept as it is, so the floor still means what the design says.
- The keyword leg's BM25 is read against the tenant: divided by its spread (standard deviation)
  over all of the tenant's memories for this query. A score is not comparable across queries or
  tenants; its distance from the tenant's typical score is. This is z-score fusion with the
  cosine's own spread taken as proportional to the floor, which is the one model-specific number
  a deployment already calibrates (MiniLM: floor 0.30, cosine spread 0.09-0.16 per query on
  LoCoMo; Titan: floor 0.10 and a compressed scale).
- A memory the keyword leg found but the vector leg did not return is given the lowest cosine the
  vector leg did return: its own is lower still, and that bound is all that is known of it.

The weight and the BM25 parameters were chosen by the sweep in ``docs/benchmarks.md`` (LoCoMo and
the long technical notes); RRF and min-max fusion measured worse there.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from shared.lexical.feedback import FEEDBACK_MEMORIES
from shared.lexical.query import KeywordQuery, KeywordResult
from shared.model import Hit
from shared.ranking.candidate import Candidate

KEYWORD_WEIGHT: Final = 0.12


def fuse(hits: Sequence[Hit], keyword: KeywordResult | None, *, floor: float) -> list[Candidate]:
    """Every candidate of both legs once, by id, with its fused relevance; the vector leg's
    candidates first, in its order, then the keyword leg's own."""
    by_id = {hit.memory_id: hit for hit in keyword.hits} if keyword is not None else {}
    scale = (
        KEYWORD_WEIGHT * floor / keyword.spread if keyword is not None and keyword.spread else 0.0
    )
    bound = min((hit.similarity for hit in hits), default=0.0)
    candidates: list[Candidate] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.memory.id in seen:
            continue
        seen.add(hit.memory.id)
        found = by_id.get(hit.memory.id)
        candidates.append(
            Candidate(
                memory_id=hit.memory.id,
                memory=hit.memory,
                similarity=hit.similarity,
                keyword=found,
                relevance=hit.similarity + (scale * found.score if found else 0.0),
            )
        )
    for memory_id, found in by_id.items():
        if memory_id in seen:
            continue
        seen.add(memory_id)
        candidates.append(
            Candidate(
                memory_id=memory_id,
                memory=None,
                similarity=bound,
                keyword=found,
                relevance=bound + scale * found.score,
            )
        )
    return candidates


def fuse_again(
    candidates: Sequence[Candidate], fed_back: Mapping[str, float], *, spread: float, floor: float
) -> list[Candidate]:
    """The ``candidates`` of ``fuse`` with the keyword leg's scores for the query and its
    feedback (``fed_back``, see ``shared.lexical.feedback``) in place of the query's own, read
    against the query's own ``spread``; each keeps its first relevance as ``asked``.

    The feedback's terms come from the first answer's best memories, so they lift the memory
    that was first, and every memory like it, whether or not what was asked is stored: two
    versions of a fact drift apart (an older message gains most from its own terms and moves
    past the revision band; docs/benchmarks.md), a runner-up closes on the first, a question
    about nothing stored clears the floor. Whether anything is stored, confidence and which
    version is newer are read on ``asked`` (``Candidate.own_relevance``); the feedback orders."""
    scale = KEYWORD_WEIGHT * floor / spread if spread else 0.0
    return [
        msgspec.structs.replace(
            c,
            relevance=c.similarity + scale * fed_back.get(c.memory_id, 0.0),
            asked=c.relevance,
        )
        for c in candidates
    ]


def with_feedback(
    candidates: Sequence[Candidate], scored: KeywordQuery, *, floor: float
) -> list[Candidate]:
    """The ``candidates`` of ``fuse`` rescored with the keyword leg's feedback: their best
    ``FEEDBACK_MEMORIES`` by relevance are taken as relevant (``KeywordQuery.fed_back``) and the
    candidates fused again (``fuse_again``); as they were when there is nothing to add."""
    best = heapq.nlargest(FEEDBACK_MEMORIES, candidates, key=lambda c: c.relevance)
    fed_back = scored.fed_back([c.memory_id for c in best], [c.memory_id for c in candidates])
    if not fed_back:
        return list(candidates)
    return fuse_again(candidates, fed_back, spread=scored.spread, floor=floor)
