"""Recall modes: how strict the cut is, how many results by default, and how the score is mixed."""

from __future__ import annotations

from typing import Final, Literal

import msgspec

RecallMode = Literal["precision", "balanced", "exploratory"]
RECALL_MODES: Final[tuple[RecallMode, ...]] = ("precision", "balanced", "exploratory")
DEFAULT_MODE: Final[RecallMode] = "balanced"


class ModeProfile(msgspec.Struct, frozen=True, kw_only=True):
    """keep_ratio: a hit survives when its relevance is at least this fraction of the top one's.
    w_recency and w_access mix the tie-break (see tie_break.tie_breaks) beside trust's fixed 0.10.
    max_tokens: the answer's default budget (characters ÷ 4; see services/api/tools/render.py)."""

    keep_ratio: float
    limit: int
    w_recency: float
    w_access: float
    max_tokens: int


MODE_PROFILES: Final[dict[RecallMode, ModeProfile]] = {
    "precision": ModeProfile(
        keep_ratio=0.80, limit=3, w_recency=0.10, w_access=0.05, max_tokens=1_000
    ),
    "balanced": ModeProfile(
        keep_ratio=0.50, limit=5, w_recency=0.20, w_access=0.10, max_tokens=2_000
    ),
    "exploratory": ModeProfile(
        keep_ratio=0.35, limit=10, w_recency=0.30, w_access=0.20, max_tokens=4_000
    ),
}
