"""Dedup: is a new fact already known? Cosine above 0.92 *and* half the words shared.

The word rule is what no embedding model gets a vote on: under a model whose similarities are
compressed into a narrow band, two unrelated facts can clear the cosine, and the wording is
what stops them merging. Failing this way writes a duplicate rather than losing a memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from shared.model import Hit

DEDUP_THRESHOLD: Final = 0.92
DEDUP_MIN_WORD_OVERLAP: Final = 0.5
_NON_WORD: Final = re.compile(r"[\W_]+")


def word_set(text: str) -> frozenset[str]:
    """Lower-cased runs of Unicode letters and digits (works for Korean as well as English)."""
    return frozenset(word for word in _NON_WORD.split(text.lower()) if word)


def word_overlap(first: str, second: str) -> float:
    """Jaccard index of the two word sets; 0 when either has no words."""
    a, b = word_set(first), word_set(second)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def already_known(content: str, visible: Sequence[Hit]) -> Hit | None:
    """The visible memory that already says ``content``, or None."""
    nearest = max(visible, key=lambda hit: hit.similarity, default=None)
    if nearest is None or nearest.similarity <= DEDUP_THRESHOLD:
        return None
    if word_overlap(content, nearest.memory.content) < DEDUP_MIN_WORD_OVERLAP:
        return None
    return nearest
