"""Pure recall ranking: the floor, the fraction-of-top cut, the composite score and confidence.

Nothing here awaits, reads the clock or the environment: ``now_ms`` and the counters are
parameters, so every rule can be table-tested.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from shared.model import Hit, Memory, MemoryType
from shared.model.counters import ZERO_COUNT, AccessCount
from shared.model.ids import parse_iso_ms
from shared.ranking.modes import ModeProfile

DAY_MS: Final = 86_400_000
RECENCY_HALFLIFE_DAYS: Final = 30.0
TRUST_WEIGHT: Final = 0.10
TRUST_HALFLIFE_DAYS: Final[dict[MemoryType, float]] = {
    "project": 180.0,
    "reference": 120.0,
    "pattern": 60.0,
    "conversation": 30.0,
}
USAGE_CAP: Final = 1.5
HIGH_CONFIDENCE_MULTIPLE: Final = 3.0
# An unparseable timestamp sinks its memory instead of producing NaN.
_UNKNOWN_AGE_DAYS: Final = float(2**53 - 1)

Confidence = Literal["high", "medium", "low"]


class Ranked(msgspec.Struct, frozen=True, kw_only=True):
    memory: Memory
    similarity: float
    score: float


class RecallOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What ranking decided: the results in order, the gated count and the confidence."""

    results: tuple[Ranked, ...]
    gated: int
    confidence: Confidence
    top_score: float


def _age_days(memory: Memory, counts: AccessCount, now_ms: int) -> float:
    last_ms = parse_iso_ms(counts.last_at) if counts.last_at else None
    if last_ms is None:
        last_ms = parse_iso_ms(memory.created_at)
    if last_ms is None:
        return _UNKNOWN_AGE_DAYS
    return max(0.0, (now_ms - last_ms) / DAY_MS)


def trust(memory: Memory, counts: AccessCount, *, age_days: float) -> float:
    """Trust decays with the type's half-life; use slows the decay, never lifts it above base."""
    decay = math.pow(2.0, -age_days / TRUST_HALFLIFE_DAYS[memory.memory_type])
    usage = min(USAGE_CAP, 1 + 0.1 * math.log(max(1, counts.access + 1)))
    adjusted = decay * usage if decay < 1 else decay
    return memory.trust_base * min(1.0, adjusted)


def composite_score(
    hit: Hit,
    counts: AccessCount,
    *,
    profile: ModeProfile,
    top_similarity: float,
    max_access: int,
    now_ms: int,
) -> float:
    """similarity relative to the top, recency, access share and trust, mixed by the mode."""
    rel_similarity = min(1.0, hit.similarity / top_similarity) if top_similarity > 0 else 0.0
    age_days = _age_days(hit.memory, counts, now_ms)
    recency = math.pow(2.0, -age_days / RECENCY_HALFLIFE_DAYS)
    access = min(1.0, counts.access / max_access) if max_access > 0 else 0.0
    return (
        rel_similarity * profile.w_similarity
        + recency * profile.w_recency
        + access * profile.w_access
        + trust(hit.memory, counts, age_days=age_days) * TRUST_WEIGHT
    )


def confidence_of(similarity: float | None, *, floor: float) -> Confidence:
    """HIGH at three times the floor (inclusive), MEDIUM below it, LOW with no result."""
    if similarity is None:
        return "low"
    return "high" if similarity >= HIGH_CONFIDENCE_MULTIPLE * floor else "medium"


def rank(
    visible: Sequence[Hit],
    counts: Mapping[str, AccessCount],
    *,
    profile: ModeProfile,
    limit: int,
    floor: float,
    now_ms: int,
) -> RecallOutcome:
    """Floor gate, fraction-of-top gate, composite score, stable sort, cut to ``limit``.

    ``visible`` must already be filtered by conversation visibility, so the gated count never
    includes another conversation's notes.
    """
    relevant = [hit for hit in visible if hit.similarity >= floor]
    top_similarity = max((hit.similarity for hit in relevant), default=0.0)
    keeping = [hit for hit in relevant if hit.similarity >= top_similarity * profile.keep_ratio]
    gated = len(visible) - len(keeping)
    # Looked up once per hit: ``counts`` may sum several maps per lookup (SummedCounts).
    counted = [counts.get(hit.memory.id, ZERO_COUNT) for hit in keeping]
    max_access = max((count.access for count in counted), default=0)
    scored = [
        Ranked(
            memory=hit.memory,
            similarity=hit.similarity,
            score=composite_score(
                hit,
                count,
                profile=profile,
                top_similarity=top_similarity,
                max_access=max_access,
                now_ms=now_ms,
            ),
        )
        for hit, count in zip(keeping, counted, strict=True)
    ]
    scored.sort(key=lambda ranked: ranked.score, reverse=True)
    results = tuple(scored[:limit])
    # Confidence follows the top-scored result, which is what the model reads first.
    confidence = confidence_of(results[0].similarity if results else None, floor=floor)
    return RecallOutcome(
        results=results,
        gated=gated,
        confidence=confidence,
        top_score=results[0].score if results else 0.0,
    )
