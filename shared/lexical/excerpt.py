"""Which part of a long memory to show: the passage around the words it was found by.

A memory longer than ``LONG_MEMORY_CHARS`` is shown as an excerpt of about ``EXCERPT_CHARS``:
the window holding the most of the matched query terms (a name counts most, then a term once
per distinct term), or, when it was found by meaning alone, its beginning — the part the local
model read when it embedded it (its first 256 tokens). Pure text arithmetic, no I/O.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Collection
from typing import Final

import msgspec

from shared.model.tokens import _PIECE as PIECE
from shared.model.tokens import is_name, term_spans

LONG_MEMORY_CHARS: Final = 1200
EXCERPT_CHARS: Final = 900
# The long memories whose term spans are kept (``_spans``): about 6 KB each for a
# 3,600-character message, beside the text itself.
SPANNED_MEMORIES: Final = 256
# A name (e1042, a_b) held in a window counts as this many plain words.
_NAME_WEIGHT: Final = 4


class Excerpt(msgspec.Struct, frozen=True, kw_only=True):
    """``text[start:end]`` of a memory, snapped to word boundaries."""

    start: int
    end: int

    def of(self, text: str) -> str:
        inner = " ".join(text[self.start : self.end].split())
        lead = "…" if self.start > 0 else ""
        tail = "…" if self.end < len(text) else ""
        return f"{lead}{inner}{tail}"


def excerpt(
    text: str,
    matched: Collection[str],
    *,
    chars: int = EXCERPT_CHARS,
    longest: int = LONG_MEMORY_CHARS,
) -> Excerpt | None:
    """The ``chars`` of ``text`` to show, or None when it is at most ``longest`` and is shown
    whole."""
    if len(text) <= longest:
        return None
    wanted = set(matched)
    hits = _hits(text, wanted)
    if not hits:
        return _snapped(text, 0, chars)
    best_start, best_end = _best_window(hits, wanted, chars)
    # The hits in the middle of the window, with what leads up to them and follows; a window
    # that would run past either end is moved inside, so it is always ``chars`` long.
    start = best_start - (chars - (best_end - best_start)) // 2
    return _snapped(text, max(0, min(start, len(text) - chars)), chars)


def _best_window(hits: list[tuple[int, int, str]], wanted: set[str], chars: int) -> tuple[int, int]:
    """From a hit's start to the end of the last hit within ``chars`` of it: the window that
    holds the most weight of distinct terms (the first such, on a tie). It slides along the
    hits, each entering and leaving it once: a long memory full of a matched word has hundreds."""
    # Weighed once per term, not once per window holding it.
    weights = {term: _NAME_WEIGHT if is_name(term) else 1 for term in wanted}
    best_start, best_end, best_weight = hits[0][0], hits[0][1], -1
    held: dict[str, int] = dict.fromkeys(wanted, 0)
    weight = 0
    ahead = 0  # the window is hits[i:ahead]
    for i, (start, _, term) in enumerate(hits):
        ahead = max(ahead, i)
        while ahead < len(hits) and hits[ahead][1] - start <= chars:
            entering = hits[ahead][2]
            if not held[entering]:
                weight += weights[entering]
            held[entering] += 1
            ahead += 1
        end = hits[ahead - 1][1] if ahead > i else start
        if weight > best_weight:
            best_start, best_end, best_weight = start, end, weight
        if ahead > i:
            held[term] -= 1
            if not held[term]:
                weight -= weights[term]
    return best_start, best_end


def _hits(text: str, wanted: set[str]) -> list[tuple[int, int, str]]:
    """``term_spans(text)`` of the ``wanted`` terms."""
    if not wanted:
        return []
    starts, ends, found = _spans(text)
    return [(starts[i], ends[i], term) for i, term in enumerate(found) if term in wanted]


@functools.lru_cache(maxsize=SPANNED_MEMORIES)
def _spans(text: str) -> tuple[array[int], array[int], tuple[str, ...]]:
    """Every term of ``text`` with its piece's span, as starts, ends and terms, worked out a
    piece at a time: a long memory's pieces are mostly words seen before, and working out a
    piece's terms costs several regular expressions. Kept for the memories shown last: a
    memory shown once tends to be shown again (the same subject asked about again, a question
    retried), and picking its hits out of these is a tenth of walking its pieces again."""
    starts, ends, found = array("I"), array("I"), []
    for match in PIECE.finditer(text):
        piece_terms = _piece_terms(match.group())
        if piece_terms:
            start, end = match.span()
            for term in piece_terms:
                starts.append(start)
                ends.append(end)
                found.append(term)
    return starts, ends, tuple(found)


@functools.lru_cache(maxsize=1 << 15)
def _piece_terms(piece: str) -> tuple[str, ...]:
    # A piece is one run of the characters term_spans splits a text into, so its terms alone
    # are the ones term_spans gives it inside any text.
    return tuple(term for _, _, term in term_spans(piece))


CHARS_PER_TOKEN: Final = 4


def _snapped(text: str, start: int, chars: int) -> Excerpt:
    end = min(len(text), start + chars)
    if start > 0:
        space = text.find(" ", start, start + 40)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", end - 40, end)
        end = space if space > start else end
    return Excerpt(start=start, end=end)
