"""One tenant's BM25 index, in memory: pure data and arithmetic, no I/O.

Documents are memory ids with their term counts (see ``tokens``); the index holds every memory
of the tenant, so a keyword hit is found whether or not the vector leg saw it. Scores are Okapi
BM25. The parameters were chosen on LoCoMo turns (``docs/benchmarks.md``): a length
normalisation of 0.3 instead of the textbook 0.75, because a longer memory usually says more
rather than repeating itself, and k1 0.9.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Iterable, Mapping
from typing import Final

import msgspec

K1: Final = 0.9
B: Final = 0.3
# A term in at least this share of the tenant's memories says little about any one of them: it
# is never what makes a keyword hit "strong" (see KeywordHit.rare_matched).
RARE_SHARE: Final = 0.05

TermCounts = Mapping[str, int]


class KeywordHit(msgspec.Struct, frozen=True, kw_only=True):
    """One memory's BM25 score for a query, and which of the query's terms it holds."""

    memory_id: str
    score: float
    matched: tuple[str, ...]
    # Every rare term of the query (see RARE_SHARE) is in this memory, and there was one.
    all_rare: bool
    # The share of the query's weight (its terms' IDF, a term no memory holds weighing most)
    # that this memory holds: 1.0 when it holds every term of the query.
    coverage: float


class KeywordResult(msgspec.Struct, frozen=True, kw_only=True):
    """The best hits, and the spread of the query's score over all of the tenant's memories
    (0 when nothing matched): what fusion divides by, so a score is read against the tenant."""

    hits: tuple[KeywordHit, ...]
    spread: float
    documents: int


def _idf(documents: int, frequency: int) -> float:
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


class LexicalIndex:
    """Postings per term; add and remove are O(terms of the memory)."""

    __slots__ = ("_entries", "_lengths", "_postings", "_terms", "_total_length")

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        # Each memory's terms (the same string objects the postings are keyed by), so that a
        # removal, which arrives as an id alone (a lexicon shard's "remove"), touches only that
        # memory's posting lists: walking the whole vocabulary made every forget cost
        # O(distinct terms of the tenant). About 8 bytes per entry, plus a tuple per memory.
        self._terms: dict[str, tuple[str, ...]] = {}
        self._total_length = 0
        self._entries = 0

    def __len__(self) -> int:
        return len(self._lengths)

    @property
    def entries(self) -> int:
        """(memory, term) pairs held: what the index's memory grows with, ~60 bytes each
        (tracemalloc: 3.9 MiB for 5,882 LoCoMo turns, 69,607 entries, with plain words indexed
        by their stem; 5.9 MiB and 89,871 entries before). About 6.6 MiB per 10,000
        one-sentence memories."""
        return self._entries

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._lengths

    def add(self, memory_id: str, counts: TermCounts) -> None:
        """Index a memory; adding one that is already there changes nothing (memories are
        immutable, so the same id always carries the same terms)."""
        if memory_id in self._lengths:
            return
        length = sum(counts.values())
        self._lengths[memory_id] = length
        self._total_length += length
        self._entries += len(counts)
        # Interned, so the postings' keys and every memory's term tuple share one string each.
        held = tuple(sys.intern(term) for term in counts)
        for term, count in zip(held, counts.values(), strict=True):
            self._postings.setdefault(term, {})[memory_id] = count
        self._terms[memory_id] = held

    def remove(self, memory_id: str) -> None:
        """Drop a memory: O(its terms)."""
        length = self._lengths.pop(memory_id, None)
        if length is None:
            return
        self._total_length -= length
        for term in self._terms.pop(memory_id, ()):
            posting = self._postings.get(term)
            if posting is not None and posting.pop(memory_id, None) is not None:
                self._entries -= 1
                if not posting:
                    del self._postings[term]

    def query(self, query_terms: Iterable[str], *, skip: Collection[str] = ()) -> KeywordQuery:
        """Score every memory holding a term of the query (each term counted once); memories
        in ``skip`` are left out as if they were not indexed."""
        return KeywordQuery(self, list(dict.fromkeys(query_terms)), skip)

    def search(
        self, query_terms: Iterable[str], *, top_k: int, include: Collection[str] = ()
    ) -> KeywordResult:
        return self.query(query_terms).result(top_k=top_k, include=include)


class KeywordQuery:
    """One query scored against the whole index at once (see ``LexicalIndex.query``). Scoring
    runs when it is built, so a caller can build it while something else is awaited and pick
    the hits it needs afterwards."""

    __slots__ = ("_matched", "_rare", "_scores", "_weights", "_whole_weight", "documents", "spread")

    def __init__(self, index: LexicalIndex, unique: list[str], skip: Collection[str]) -> None:
        postings, lengths = index._postings, index._lengths
        documents = len(lengths)
        self.documents = documents
        self._weights = {t: _idf(documents, len(postings.get(t, ()))) for t in unique}
        self._whole_weight = sum(self._weights.values())
        self._scores: dict[str, float] = {}
        self._matched: dict[str, list[str]] = {}
        present = [t for t in unique if t in postings]
        average = index._total_length / documents if documents else 0.0
        for term in present:
            idf = self._weights[term]
            for memory_id, count in postings[term].items():
                if memory_id in skip:
                    continue
                norm = K1 * (1 - B + B * lengths[memory_id] / average)
                self._scores[memory_id] = self._scores.get(memory_id, 0.0) + idf * count * (
                    K1 + 1
                ) / (count + norm)
                self._matched.setdefault(memory_id, []).append(term)
        # Memories without a match score 0: the spread over all of them needs only the matches.
        if documents and self._scores:
            mean = sum(self._scores.values()) / documents
            squares = sum(score * score for score in self._scores.values()) / documents
            self.spread = math.sqrt(max(0.0, squares - mean * mean))
        else:
            self.spread = 0.0
        rare_at_most = max(1.0, RARE_SHARE * documents)
        self._rare = {t for t in present if len(postings[t]) <= rare_at_most}

    def _hit(self, memory_id: str) -> KeywordHit:
        matched = self._matched[memory_id]
        return KeywordHit(
            memory_id=memory_id,
            score=self._scores[memory_id],
            matched=tuple(matched),
            all_rare=bool(self._rare) and self._rare.issubset(matched),
            coverage=sum(self._weights[t] for t in matched) / self._whole_weight,
        )

    def result(self, *, top_k: int, include: Collection[str] = ()) -> KeywordResult:
        """The ``top_k`` best hits, then any of ``include`` that matched at all (the vector
        leg's candidates, so fusion knows their keyword score too)."""
        best = sorted(self._scores, key=self._scores.__getitem__, reverse=True)[:top_k]
        chosen = set(best)
        best += [m for m in dict.fromkeys(include) if m in self._scores and m not in chosen]
        return KeywordResult(
            hits=tuple(self._hit(m) for m in best), spread=self.spread, documents=self.documents
        )


__all__ = [
    "K1",
    "RARE_SHARE",
    "B",
    "KeywordHit",
    "KeywordQuery",
    "KeywordResult",
    "LexicalIndex",
    "TermCounts",
]
