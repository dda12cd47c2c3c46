"""Which part of a long memory to show: the passage around the words it was found by.

A memory longer than ``LONG_MEMORY_CHARS`` is shown as an excerpt of about ``EXCERPT_CHARS``:
the window holding the most of the matched query terms (a name counts most, then a term once
per distinct term), or, when it was found by meaning alone, its beginning — the part the local
model read when it embedded it (its first 256 tokens). Pure text arithmetic, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Final

import msgspec

from shared.model.tokens import PIECE, PIECE_CHAR, is_name, term_spans

LONG_MEMORY_CHARS: Final = 1200
EXCERPT_CHARS: Final = 900
# The excerpts worked out last that are kept: a memory shown once tends to be shown again for
# the same words (the same subject asked about again, a question retried).
KEPT_EXCERPTS: Final = 256
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
    return _window(text, frozenset(matched), chars)


@functools.lru_cache(maxsize=KEPT_EXCERPTS)
def _window(text: str, wanted: frozenset[str], chars: int) -> Excerpt:
    hits = _hits(text, wanted)
    if not hits:
        return _snapped(text, 0, chars)
    best_start, best_end = _best_window(hits, wanted, chars)
    # The hits in the middle of the window, with what leads up to them and follows; a window
    # that would run past either end is moved inside, so it is always ``chars`` long.
    start = best_start - (chars - (best_end - best_start)) // 2
    return _snapped(text, max(0, min(start, len(text) - chars)), chars)


def _best_window(
    hits: list[tuple[int, int, str]], wanted: frozenset[str], chars: int
) -> tuple[int, int]:
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


def _hits(text: str, wanted: frozenset[str]) -> list[tuple[int, int, str]]:
    """Where in ``text`` the ``wanted`` terms stand (as ``term_spans`` gives them), in order.

    Only the pieces that hold a wanted term's first letters are read: working out a piece's
    terms costs a stem or several regular expressions, and a long memory's matched terms stand
    in a few of its hundreds of pieces, which one scan for those letters finds."""
    if not wanted:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        # A letter whose lower case is longer ("İ"): its positions would not be the text's.
        return [(s, e, term) for s, e, term in term_spans(text) if term in wanted]
    hits: list[tuple[int, int, str]] = []
    end = 0
    for at in sorted(_positions(lowered, _heads(wanted))):
        if at < end:
            continue  # in the piece just read
        start = at
        while start and PIECE_CHAR.match(lowered, start - 1):
            start -= 1
        piece = PIECE.match(text, start)
        if piece is None:  # cannot happen: the letters found are a piece's own
            continue
        end = piece.end()
        hits.extend((start, end, term) for term in _piece_terms(piece.group()) if term in wanted)
    return hits


def _positions(text: str, heads: Collection[str]) -> set[int]:
    """Where any of ``heads`` stands in ``text`` (``str.find``: a scan in C per head)."""
    found: set[int] = set()
    for head in heads:
        at = text.find(head)
        while at != -1:
            found.add(at)
            at = text.find(head, at + 1)
    return found


def _heads(terms: frozenset[str]) -> frozenset[str]:
    """The first letters of every piece that can give one of ``terms``, lower-cased: a term's
    first three, or two when it is three letters or fewer. A stem changes only its end ("using"
    → ``use``, "flying" → ``fli``), where Snowball may also write a "y" as "i"; a term drawn from
    an identifier is a run of its lower-cased text."""
    heads: set[str] = set()
    for term in terms:
        head = term[:3] if len(term) > 3 else term[:2]
        variants = [""]
        for k, letter in enumerate(head):
            spelled = ("i", "y") if k and letter == "i" else (letter,)
            variants = [v + s for v in variants for s in spelled]
        heads.update(variants)
    return frozenset(heads)


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
