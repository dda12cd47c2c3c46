"""The design's composite (recency, access counts, trust) as recall uses it: a tie-break
between results of comparable relevance, never a score of its own (``shared.ranking.score``
bounds it; docs/calibration.md has why). Pure: ``now_ms`` and the counts are parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

import numpy as np
import numpy.typing as npt

from shared.model import DAY_MS, Memory, MemoryType
from shared.model.counters import AccessCount
from shared.model.ids import parse_iso_ms
from shared.ranking.modes import ModeProfile

RECENCY_HALFLIFE_DAYS: Final = 30.0
TRUST_WEIGHT: Final = 0.10
TRUST_HALFLIFE_DAYS: Final[dict[MemoryType, float]] = {
    "project": 180.0,
    "reference": 120.0,
    "pattern": 60.0,
    "conversation": 30.0,
}
USAGE_CAP: Final = 1.5
# An unparseable timestamp sinks its memory instead of producing NaN.
_UNKNOWN_AGE_DAYS: Final = float(2**53 - 1)

Floats = npt.NDArray[np.float64]
# A float or an array of them: the trust rule is written once for both.
_Number = TypeVar("_Number", float, Floats)


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


def tie_breaks(
    memories: Sequence[Memory],
    counted: Sequence[AccessCount],
    *,
    profile: ModeProfile,
    now_ms: int,
) -> Floats:
    """Each memory's recency, share of the most-used one's accesses and trust, mixed by the
    mode's weights into [0, 1]; ``counted[i]`` is ``memories[i]``'s access count."""
    size = len(memories)
    access = np.fromiter((count.access for count in counted), np.float64, size)
    age_days = np.fromiter(
        (_age_days(m, count, now_ms) for m, count in zip(memories, counted, strict=True)),
        np.float64,
        size,
    )
    half_lives = np.fromiter(
        (TRUST_HALFLIFE_DAYS[m.memory_type] for m in memories), np.float64, size
    )
    bases = np.fromiter((m.trust_base for m in memories), np.float64, size)
    max_access = float(access.max(initial=0.0))
    recency = np.exp2(-age_days / RECENCY_HALFLIFE_DAYS)
    share = np.minimum(1.0, access / max_access) if max_access > 0 else np.zeros(size)
    mixed: Floats = (
        recency * profile.w_recency
        + share * profile.w_access
        + _trust(bases, half_lives, access, age_days) * TRUST_WEIGHT
    ) / (profile.w_recency + profile.w_access + TRUST_WEIGHT)
    return mixed
