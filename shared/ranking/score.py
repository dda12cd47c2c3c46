"""Pure recall ranking: the gates, the order, and confidence.

Relevance (the fused cosine and keyword score, see ``fusion``) decides. The design's composite —
recency, access counts, trust — stays, but only as a tie-break worth at most ``TIE_BAND`` × floor
of relevance, so it reorders results of comparable relevance and never buries a clearly better
one (as a full score it lowered recall on LoCoMo: docs/calibration.md). Before relevance comes the
query's names: a memory holding more of them whole ranks first. Among the results, of two on the
same subject the newer is put first when nearly as relevant: a revision outranks what it revises.
Confidence is per result (HIGH, MEDIUM, LOW); the answer states its best. It, whether anything is
stored and which version is newer are read on the question's own relevance, before the feedback.

Nothing here awaits, reads the clock or the environment: ``now_ms`` and the counters are
parameters, so every rule can be table-tested.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec
import numpy as np

from shared.model import Memory
from shared.model.counters import ZERO_COUNT, AccessCount
from shared.ranking.candidate import Candidate
from shared.ranking.linked import linked_first, shown_links
from shared.ranking.modes import ModeProfile
from shared.ranking.relations import RelationReader
from shared.ranking.tie_break import tie_breaks
from shared.ranking.versions import REVISION_BAND, newer_first

# The most the composite can add to a relevance, in units of the floor (0.03 on MiniLM's 0.30).
TIE_BAND: Final = 0.1
# A result at the HIGH line is HIGH when its relevance is this many times the next relevant
# memory's: the first result stands alone (docs/calibration.md has the table behind it).
CLEAR_RATIO: Final = 1.8
# How far below the floor a result may stand beside one that reaches it (see gate), as a
# fraction of the floor: low enough to keep right answers just under the floor beside a weak
# top, high enough to keep the hard technical notes (docs/benchmarks.md, "Gates").
COMPANION_FLOOR: Final = 0.8

Confidence = Literal["high", "medium", "low"]


class Ranked(msgspec.Struct, frozen=True, kw_only=True):
    """A result: its memory, the legs' evidence, and whether it alone would be HIGH."""

    memory: Memory
    similarity: float
    relevance: float
    score: float
    matched: tuple[str, ...] = ()
    # The share of the query's keyword weight this memory holds (see KeywordHit.coverage).
    coverage: float = 0.0
    strong: bool = False
    confidence: Confidence = "medium"
    # The results that probably update this one (it is probably outdated), and the results
    # this one probably updates: ``shared.ranking.versions``.
    superseded_by: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()


class RecallOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What ranking decided: the results in order, the gated count and the confidence."""

    results: tuple[Ranked, ...]
    gated: int
    confidence: Confidence
    top_score: float


def is_strong(
    candidate: Candidate,
    *,
    runner_up: float,
    high_similarity: float,
    names_absent: bool,
    clear_ratio: float = CLEAR_RATIO,
) -> bool:
    """Whether this result alone is a confident answer: the one memory holding the query's
    names (no other memory of the tenant holds any of them), or a cosine at the model's HIGH
    line that stands clear of every other relevant memory (``CLEAR_RATIO`` times the next
    relevance). Never while the query names something no memory holds. Relevance here is the
    question's own, before the keyword leg's feedback (``shared.operations.fusion.fuse_again``),
    which lifts the first memory's neighbours with it.

    A high cosine alone is not enough: in a chat, many turns on the same subject reach it, and
    the first of them is the asked one in well under half of the answers (docs/calibration.md,
    "Confidence"). Nor is holding the query's words: a long message holds most words of any
    question about its chat."""
    if names_absent:
        return False
    keyword = candidate.keyword
    if keyword is not None and keyword.sole:
        return True
    return (
        candidate.similarity >= high_similarity
        and candidate.own_relevance >= clear_ratio * runner_up
    )


def confidence_of_result(candidate: Candidate, *, strong: bool, floor: float) -> Confidence:
    """HIGH when strong; MEDIUM when relevant above the floor; LOW when only the keyword leg's
    gate let it through (it holds the query's rare words, not its meaning)."""
    if strong:
        return "high"
    return "medium" if candidate.own_relevance >= floor else "low"


_CONFIDENCE_ORDER: Final[dict[Confidence, int]] = {"low": 0, "medium": 1, "high": 2}


def confidence_of(results: Sequence[Ranked]) -> Confidence:
    """The answer's confidence: its most confident result's; LOW with none."""
    return max((r.confidence for r in results), key=_CONFIDENCE_ORDER.__getitem__, default="low")


def passes_floor(candidate: Candidate, *, floor: float, own: bool = False) -> bool:
    """The floor gates relevance (``own``: the question's own, before the feedback); the keyword
    leg's own gate is holding every rare query term or being named by the query
    (``query_names_held``), so a strong keyword match is returned whatever its cosine."""
    keyword = candidate.keyword
    return (candidate.own_relevance if own else candidate.relevance) >= floor or (
        keyword is not None and (keyword.all_rare or query_names_held(candidate) > 0)
    )


def query_names_held(candidate: Candidate) -> int:
    """How many of the query's selective names (``KeywordResult.names``) it holds whole, plus
    one when the query is made of its labels (``KeywordHit.labelled``): a category or tag names
    its memory as its author filed it, rare or not. Never HIGH on its own (``is_strong``)."""
    keyword = candidate.keyword
    return keyword.names + keyword.labelled if keyword is not None else 0


def rank_order(candidate: Candidate) -> tuple[int, float]:
    """The key ``rank`` orders by before its tie-break: the query's names held, then relevance
    (best last; use with ``reverse`` or ``heapq.nlargest``)."""
    return query_names_held(candidate), candidate.relevance


def gate(candidates: Sequence[Candidate], *, floor: float, keep_ratio: float) -> list[Candidate]:
    """The floor decides whether anything relevant is stored; the mode's fraction of the top
    decides what comes with it. Nothing is returned unless some memory reaches the floor. Beside
    it, a memory within the fraction of the top is kept down to ``COMPANION_FLOOR`` × floor and
    labelled LOW: a cut at the floor itself dropped right answers just under it beside a weak
    top, below what plain cosine returns (docs/benchmarks.md, "Gates"), while a strong top's
    fraction lies above the floor anyway. A memory holding one of the query's names is
    never cut: it is what an exact-name query asks for, however its cosine reads."""
    present = [c for c in candidates if c.memory is not None]
    relevant = [c for c in present if passes_floor(c, floor=floor)]
    # Whether anything is stored is the question's own say: the feedback lifts a question about
    # nothing stored over the floor with its neighbours (docs/benchmarks.md).
    if not relevant or not any(passes_floor(c, floor=floor, own=True) for c in present):
        return []
    top_relevance = max(c.relevance for c in relevant)
    cut = top_relevance * keep_ratio
    companion = max(cut, COMPANION_FLOOR * floor)
    return [
        c
        for c in present
        if c.relevance >= companion
        or (passes_floor(c, floor=floor) and (c.relevance >= cut or query_names_held(c) > 0))
    ]


def names_first(scores: Sequence[float], names_held: Sequence[int]) -> list[int]:
    """Positions by the number of the query's names held whole, then by score: a memory holding
    the query's whole identifier ranks above every memory holding only a part of it, or none,
    whatever the tenant's size and however long the memory. Equal keys keep their order (the
    legs', nearest first)."""
    return sorted(range(len(scores)), key=lambda i: (-names_held[i], -scores[i]))


def _matched(candidate: Candidate) -> tuple[str, ...]:
    return candidate.keyword.matched if candidate.keyword is not None else ()


def _coverage(candidate: Candidate) -> float:
    return candidate.keyword.coverage if candidate.keyword is not None else 0.0


def rank(
    candidates: Sequence[Candidate],
    counts: Mapping[str, AccessCount],
    *,
    profile: ModeProfile,
    limit: int,
    floor: float,
    high_similarity: float,
    now_ms: int,
    names_absent: bool = False,
    links: Mapping[str, Sequence[str]] | None = None,
    relations: RelationReader | None = None,
) -> RecallOutcome:
    """Floor gate, fraction-of-top gate on relevance, relevance plus the tie-break, the query's
    names held first, cut to ``limit``, newer-first on the same subject among what is left, and
    each memory another one probably updates directly below it (``links``: old id → newer ids,
    ``shared.ranking.versions``). ``names_absent``: the query names something no memory holds
    (no result is then HIGH); ``relations``: see ``newer_first``.

    ``candidates`` must already be filtered by conversation visibility (so the gated count never
    includes another conversation's notes) and carry their memories.
    """
    links = links or {}
    present = [c for c in candidates if c.memory is not None]
    keeping = _with_newer_versions(
        gate(present, floor=floor, keep_ratio=profile.keep_ratio), present, links
    )
    gated = len(present) - len(keeping)
    memories = [c.memory for c in keeping if c.memory is not None]
    # Looked up once per memory: ``counts`` may sum several maps per lookup (SummedCounts).
    counted = [counts.get(m.id, ZERO_COUNT) for m in memories]
    ties = TIE_BAND * floor * tie_breaks(memories, counted, profile=profile, now_ms=now_ms)
    scores = np.fromiter((c.relevance for c in keeping), np.float64, len(keeping)) + ties
    own = [c.own_relevance + tie for c, tie in zip(keeping, ties.tolist(), strict=True)]
    names_held = [query_names_held(c) for c in keeping]
    values = scores.tolist()
    ranked = names_first(values, names_held)
    band = REVISION_BAND * floor
    order = _versions_placed(
        ranked, keeping, memories, own, names_held, links, relations, limit=limit, band=band
    )
    results = _confidences(
        [keeping[i] for i in order],
        [values[i] for i in order],
        present,
        floor=floor,
        high_similarity=high_similarity,
        names_absent=names_absent,
    )
    if links:
        results = _labelled(results, links)
    return RecallOutcome(
        results=tuple(results),
        gated=gated,
        confidence=confidence_of(results),
        top_score=max(values, default=0.0),
    )


def _versions_placed(
    ranked: list[int],
    keeping: Sequence[Candidate],
    memories: Sequence[Memory],
    own: Sequence[float],
    names_held: Sequence[int],
    links: Mapping[str, Sequence[str]],
    relations: RelationReader | None,
    *,
    limit: int,
    band: float,
) -> list[int]:
    """The first ``limit`` of ``ranked`` (positions into ``keeping``) with a newer memory on the
    same subject ahead of an older one when nearly as relevant (``newer_first``), then each
    memory a link names as older directly below its newer version (``linked_first``);
    ``memories``: ``keeping``'s, in the same order."""
    matched = [frozenset(_matched(c)) for c in keeping]
    order = newer_first(
        ranked[:limit], memories, own, names_held, band=band, matched=matched, relations=relations
    )
    if not links:
        return order
    placed = set(order)
    rest = [i for i in ranked if i not in placed]
    return linked_first([*order, *rest], [m.id for m in memories], links, limit=limit)


def _with_newer_versions(
    keeping: list[Candidate], present: Sequence[Candidate], links: Mapping[str, Sequence[str]]
) -> list[Candidate]:
    """``keeping`` and the newer versions of its memories that the gate left out: a probable
    update stands beside what it updates whatever its own relevance."""
    if not links:
        return keeping
    kept = {c.memory_id for c in keeping}
    wanted = {n for c in keeping for n in links.get(c.memory_id, ())} - kept
    return keeping + [c for c in present if c.memory_id in wanted]


def _labelled(results: list[Ranked], links: Mapping[str, Sequence[str]]) -> list[Ranked]:
    newer, older = shown_links([r.memory.id for r in results], links)
    return [
        msgspec.structs.replace(r, superseded_by=n, supersedes=o) if n or o else r
        for r, n, o in zip(results, newer, older, strict=True)
    ]


def _confidences(
    chosen: Sequence[Candidate],
    scores: Sequence[float],
    present: Sequence[Candidate],
    *,
    floor: float,
    high_similarity: float,
    names_absent: bool,
) -> list[Ranked]:
    """The chosen candidates as results, each with its confidence: whether it stands clear of
    the best other relevant memory among everything ``present``."""
    relevances = sorted(
        (c.own_relevance for c in present if passes_floor(c, floor=floor, own=True)), reverse=True
    )

    def runner_up(candidate: Candidate) -> float:
        # The best relevance among the others: the second one's for the first, else the first's.
        if not relevances or candidate.own_relevance < relevances[0]:
            return relevances[0] if relevances else 0.0
        return relevances[1] if len(relevances) > 1 else 0.0

    results = []
    for candidate, score in zip(chosen, scores, strict=True):
        assert candidate.memory is not None  # gate() keeps only candidates with a memory
        strong = is_strong(
            candidate,
            runner_up=runner_up(candidate),
            high_similarity=high_similarity,
            names_absent=names_absent,
        )
        results.append(
            Ranked(
                memory=candidate.memory,
                similarity=candidate.similarity,
                relevance=candidate.relevance,
                score=score,
                matched=_matched(candidate),
                coverage=_coverage(candidate),
                strong=strong,
                confidence=confidence_of_result(candidate, strong=strong, floor=floor),
            )
        )
    return results
