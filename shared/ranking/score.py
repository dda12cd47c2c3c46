"""Pure recall ranking: the floor, the fraction-of-top cut, the composite score and confidence.

Nothing here awaits, reads the clock or the environment: ``now_ms`` and the counters are
parameters, so every rule can be table-tested. The score is computed for all candidates at once
with numpy (one recall scores up to 100 of them); the same functions serve a single memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal, TypeVar

import msgspec
import numpy as np
import numpy.typing as npt

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
Floats = npt.NDArray[np.float64]
# A float or an array of them: the trust rule is written once for both.
_Number = TypeVar("_Number", float, Floats)


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


def _trust(base: _Number, half_life_days: _Number, access: _Number, age_days: _Number) -> Floats:
    decay = np.exp2(-age_days / half_life_days)
    usage = np.minimum(USAGE_CAP, 1 + 0.1 * np.log(np.maximum(1, access + 1)))
    adjusted = np.where(decay < 1, decay * usage, decay)
    return np.asarray(base * np.minimum(1.0, adjusted), dtype=np.float64)


def trust(memory: Memory, counts: AccessCount, *, age_days: float) -> float:
    """Trust decays with the type's half-life; use slows the decay, never lifts it above base."""
    half_life = TRUST_HALFLIFE_DAYS[memory.memory_type]
    return float(_trust(memory.trust_base, half_life, float(counts.access), age_days))


def composite_scores(
    hits: Sequence[Hit],
    counted: Sequence[AccessCount],
    *,
    profile: ModeProfile,
    top_similarity: float,
    now_ms: int,
) -> Floats:
    """Each hit's similarity relative to the top, recency, share of the most-used hit's accesses
    and trust, mixed by the mode; ``counted[i]`` is ``hits[i]``'s access count."""
    size = len(hits)
    similarity = np.fromiter((hit.similarity for hit in hits), np.float64, size)
    access = np.fromiter((count.access for count in counted), np.float64, size)
    age_days = np.fromiter(
        (_age_days(hit.memory, count, now_ms) for hit, count in zip(hits, counted, strict=True)),
        np.float64,
        size,
    )
    half_lives = np.fromiter(
        (TRUST_HALFLIFE_DAYS[hit.memory.memory_type] for hit in hits), np.float64, size
    )
    bases = np.fromiter((hit.memory.trust_base for hit in hits), np.float64, size)
    max_access = float(access.max(initial=0.0))
    relative = (
        np.minimum(1.0, similarity / top_similarity) if top_similarity > 0 else np.zeros(size)
    )
    recency = np.exp2(-age_days / RECENCY_HALFLIFE_DAYS)
    share = np.minimum(1.0, access / max_access) if max_access > 0 else np.zeros(size)
    scores: Floats = (
        relative * profile.w_similarity
        + recency * profile.w_recency
        + share * profile.w_access
        + _trust(bases, half_lives, access, age_days) * TRUST_WEIGHT
    )
    return scores


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
    scores = composite_scores(
        keeping, counted, profile=profile, top_similarity=top_similarity, now_ms=now_ms
    )
    # Highest score first; equal scores keep the store's order (nearest first), as a stable
    # sort on the negated score does.
    order = np.argsort(-scores, kind="stable")[:limit].tolist()
    values = scores.tolist()
    results = tuple(
        Ranked(memory=keeping[i].memory, similarity=keeping[i].similarity, score=values[i])
        for i in order
    )
    # Confidence follows the top-scored result, which is what the model reads first.
    confidence = confidence_of(results[0].similarity if results else None, floor=floor)
    return RecallOutcome(
        results=results,
        gated=gated,
        confidence=confidence,
        top_score=results[0].score if results else 0.0,
    )
