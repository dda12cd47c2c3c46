"""Pure ranking and dedup over model records."""

from shared.ranking.dedup import already_known, possible_revision, word_overlap
from shared.ranking.fusion import KEYWORD_WEIGHT, Candidate, fuse, refuse, with_feedback
from shared.ranking.modes import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES, RecallMode
from shared.ranking.score import (
    Confidence,
    Ranked,
    RecallOutcome,
    gate,
    names_first,
    names_held,
    newer_first,
    passes_floor,
    rank,
    trust,
)

__all__ = [
    "DEFAULT_MODE",
    "KEYWORD_WEIGHT",
    "MODE_PROFILES",
    "RECALL_MODES",
    "Candidate",
    "Confidence",
    "Ranked",
    "RecallMode",
    "RecallOutcome",
    "already_known",
    "fuse",
    "gate",
    "names_first",
    "names_held",
    "newer_first",
    "passes_floor",
    "possible_revision",
    "rank",
    "refuse",
    "trust",
    "with_feedback",
    "word_overlap",
]
