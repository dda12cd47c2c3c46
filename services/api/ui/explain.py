"""Why recall ranked a result where it did, in the parts ranking adds up (``shared.ranking``):

- meaning: the cosine of the query and the memory (the vector leg);
- keyword: what the keyword leg added, ``relevance − cosine``, with the words it matched;
- recency and use: the tie-break, ``score − relevance`` (recency, access counts and trust; at
  most a tenth of the floor, so it reorders near-equals and never buries a clearly better one).

And which part of the text to show: a long memory's passage around its matched words, as recall
shows it, with those words marked. Pure; no I/O.
"""

from __future__ import annotations

import msgspec

from services.api.tools.render import distinct_words, percent
from shared.lexical.excerpt import excerpt
from shared.model import Memory
from shared.model.tokens import shown, term_spans
from shared.ranking import Ranked, RecallOutcome


class Piece(msgspec.Struct, frozen=True, kw_only=True):
    """A run of text, ``marked`` when it is a word the keyword leg matched."""

    text: str
    marked: bool = False


class Explained(msgspec.Struct, frozen=True, kw_only=True):
    memory: Memory
    confidence: str
    standing: int
    meaning: float
    keyword: float
    recency: float
    score: float
    matched: tuple[str, ...]
    pieces: tuple[Piece, ...]
    excerpted: bool
    # The results that probably update this one, and those it probably updates.
    superseded_by: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()


def marked_pieces(text: str, matched: frozenset[str], *, start: int, end: int) -> list[Piece]:
    """``text[start:end]`` cut into pieces, the spans of the matched terms marked."""
    pieces: list[Piece] = []
    at = start
    for span_start, span_end, term in term_spans(text):
        if term not in matched or span_start < at or span_end > end:
            continue
        if span_start > at:
            pieces.append(Piece(text=text[at:span_start]))
        pieces.append(Piece(text=text[span_start:span_end], marked=True))
        at = span_end
    if at < end:
        pieces.append(Piece(text=text[at:end]))
    return pieces


def explained(query: str, outcome: RecallOutcome) -> list[Explained]:
    """Each result of ``outcome`` with its parts and its passage."""
    # A stem is shown as the query's word it came from ("cities", not "citi").
    words = shown(query)
    results = []
    for ranked in outcome.results:
        results.append(_explain(ranked, words, top=outcome.top_score))
    return results


def _explain(ranked: Ranked, words: dict[str, str], *, top: float) -> Explained:
    content = ranked.memory.content
    part = excerpt(content, ranked.matched)
    start, end = (part.start, part.end) if part is not None else (0, len(content))
    pieces = marked_pieces(content, frozenset(ranked.matched), start=start, end=end)
    if part is not None:
        pieces = [
            *([Piece(text="…")] if start > 0 else []),
            *pieces,
            *([Piece(text="…")] if end < len(content) else []),
        ]
    return Explained(
        memory=ranked.memory,
        confidence=ranked.confidence,
        standing=percent(ranked.score, top),
        meaning=ranked.similarity,
        keyword=ranked.relevance - ranked.similarity,
        recency=ranked.score - ranked.relevance,
        score=ranked.score,
        matched=tuple(distinct_words([words.get(t, t) for t in ranked.matched])),
        pieces=tuple(pieces),
        excerpted=part is not None,
        superseded_by=ranked.superseded_by,
        supersedes=ranked.supersedes,
    )
