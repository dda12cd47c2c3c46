"""Pure ranking and dedup over model records."""

from shared.ranking.dedup import already_known, possible_revision, word_overlap, word_set
from shared.ranking.fusion import KEYWORD_WEIGHT, Candidate, fuse
from shared.ranking.modes import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES, ModeProfile, RecallMode
from shared.ranking.score import (
    Confidence,
    Ranked,
    RecallOutcome,
    confidence_of,
    confidence_of_result,
    gate,
    is_strong,
    names_first,
    names_held,
    newer_first,
    passes_floor,
    rank,
    tie_breaks,
    trust,
)

__all__ = [
    "DEFAULT_MODE",
    "KEYWORD_WEIGHT",
    "MODE_PROFILES",
    "RECALL_MODES",
    "Candidate",
    "Confidence",
    "ModeProfile",
    "Ranked",
    "RecallMode",
    "RecallOutcome",
    "already_known",
    "confidence_of",
    "confidence_of_result",
    "fuse",
    "gate",
    "is_strong",
    "names_first",
    "names_held",
    "newer_first",
    "passes_floor",
    "possible_revision",
    "rank",
    "tie_breaks",
    "trust",
    "word_overlap",
    "word_set",
]
