"""Dedup: is a new fact already known? Cosine above 0.92 *and* half the words shared.

The word rule is what no embedding model gets a vote on: under a model whose similarities are
compressed into a narrow band, two unrelated facts can clear the cosine, and the wording is
what stops them merging. Failing this way writes a duplicate rather than losing a memory.

One more guard for the same reason: two texts whose numbers or identifiers differ never merge.
"The API listens on port 8080" and "... port 8000" share nearly every word and, on
all-MiniLM-L6-v2, clear 0.92 — merging them would silently drop the update (most changed-value
updates merge without this guard: docs/calibration.md). The same holds for a flag, a path or a
dotted name without a digit: "run it with --drain-cache" against "... --drain-all" (the
keyword probe's planted memories are lost this way unless identifiers are compared).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.model import Hit
from shared.model.tokens import identifiers
from shared.ranking.updates import probable_update
from shared.ranking.wording import word_set

DEDUP_THRESHOLD: Final = 0.92
DEDUP_MIN_WORD_OVERLAP: Final = 0.5


def numbers_in(text: str) -> frozenset[str]:
    """The words that carry a digit (ports, versions, sizes, timeouts, dates) and the
    identifiers (flags, paths, snake_case and dotted names; see shared.lexical.identifiers)."""
    digits = frozenset(word for word in word_set(text) if any(ch.isdigit() for ch in word))
    return digits | identifiers(text)


def word_overlap(first: str, second: str) -> float:
    """Jaccard index of the two word sets; 0 when either has no words."""
    a, b = word_set(first), word_set(second)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _same_text(first: str, second: str) -> bool:
    """Equal up to case and runs of whitespace: the same fact sent again."""
    return " ".join(first.casefold().split()) == " ".join(second.casefold().split())


def already_known(content: str, visible: Sequence[Hit]) -> Hit | None:
    """The visible memory that already says ``content``, or None.

    The same text sent again is always known, whatever its words: "😀😀😀" or "!!! ???" have
    none for the overlap rule to compare, which alone would store them once per send."""
    nearest = max(visible, key=lambda hit: hit.similarity, default=None)
    if nearest is None or nearest.similarity <= DEDUP_THRESHOLD:
        return None
    same = next((hit for hit in visible if _same_text(content, hit.memory.content)), None)
    if same is not None:
        return same
    if word_overlap(content, nearest.memory.content) < DEDUP_MIN_WORD_OVERLAP:
        return None
    if numbers_in(content) != numbers_in(nearest.memory.content):
        return None
    if probable_update(content, nearest.memory.content) is not None:
        return None  # "every two weeks" → "every week now": an update, never a resend
    return nearest
