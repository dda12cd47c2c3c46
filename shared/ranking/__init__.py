"""Pure ranking and dedup over model records."""

from shared.ranking.candidate import Candidate
from shared.ranking.dedup import already_known, word_overlap
from shared.ranking.modes import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES, RecallMode
from shared.ranking.score import (
    Confidence,
    Ranked,
    RecallOutcome,
    gate,
    names_first,
    passes_floor,
    query_names_held,
    rank,
    rank_order,
)
from shared.ranking.tie_break import trust
from shared.ranking.updates import first_updated, probably_updated
from shared.ranking.versions import newer_first

__all__ = [
    "DEFAULT_MODE",
    "MODE_PROFILES",
    "RECALL_MODES",
    "Candidate",
    "Confidence",
    "Ranked",
    "RecallMode",
    "RecallOutcome",
    "already_known",
    "first_updated",
    "gate",
    "names_first",
    "newer_first",
    "passes_floor",
    "probably_updated",
    "query_names_held",
    "rank",
    "rank_order",
    "trust",
    "word_overlap",
]
