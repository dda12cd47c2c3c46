"""Pure ranking and dedup over model records."""

from shared.ranking.dedup import already_known, word_overlap, word_set
from shared.ranking.modes import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES, ModeProfile, RecallMode
from shared.ranking.score import (
    Confidence,
    Ranked,
    RecallOutcome,
    composite_scores,
    confidence_of,
    rank,
    trust,
)

__all__ = [
    "DEFAULT_MODE",
    "MODE_PROFILES",
    "RECALL_MODES",
    "Confidence",
    "ModeProfile",
    "Ranked",
    "RecallMode",
    "RecallOutcome",
    "already_known",
    "composite_scores",
    "confidence_of",
    "rank",
    "trust",
    "word_overlap",
    "word_set",
]
