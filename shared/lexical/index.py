"""One tenant's BM25 index, in memory: pure data and arithmetic, no I/O.

A memory is indexed as its passages: runs of ``PASSAGE_TERMS`` terms in order (see
``segments.passage_counts``), each a BM25 document of its own. A memory scores as its best
passage, and holds every query term any of its passages holds. Scoring passages rather than
whole memories is what keeps a long memory from winning on volume: a 4,000-character answer
holds most words of any question about its chat, while the message that answers it holds them
close together (it lifts the long technical chats, while LoCoMo's one-sentence turns are one
passage each and score as before; bench/ablation.py, docs/benchmarks.md "Passages"). The index
holds every memory of the tenant, so a keyword hit is found whether or not the vector leg saw
it. Scores are Okapi BM25, with a length normalisation of 0.3 instead of the textbook 0.75 and
k1 0.9, chosen on LoCoMo turns (``docs/benchmarks.md``).

A memory's labels (its category and tags, ``segments.label_terms``) describe all of it, so each
label term is counted once more in every one of its passages, as a chunked document repeats its
title in each chunk: a label weighs what one more mention of the word in the text would, which
lets a label find its memory without outweighing what the text says. A query made of nothing
but a memory's labels (``KeywordHit.labelled``) names that memory as its author filed it.

A query is scored against the index by ``shared.lexical.query.KeywordQuery``.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Mapping, Sequence
from typing import Final

from shared.lexical import scoring
from shared.lexical.postings import PassageSlots, TermArrays
from shared.lexical.summed import SummedCounts, TermIds, TermTotals

# Joins a memory id and a passage's position in a passage's key; a ULID never holds it.
_PASSAGE_MARK: Final = "#"

TermCounts = Mapping[str, int]


def passage_key(memory_id: str, position: int) -> str:
    """The first passage is keyed by the memory id itself: a short memory costs no more than
    it did before passages."""
    return memory_id if position == 0 else f"{memory_id}{_PASSAGE_MARK}{position}"


class LexicalIndex:
    """Postings per term over passages; add and remove are O(terms of the memory)."""

    __slots__ = (
        "_arrays",
        "_changes",
        "_entries",
        "_labels",
        "_lengths",
        "_owners",
        "_passages",
        "_postings",
        "_slots",
        "_summed",
        "_terms",
        "_total_length",
    )

    def __init__(self) -> None:
        # term -> {passage key: count}
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        # Each memory's passage keys, and each passage's terms with their counts (as term ids,
        # ``SummedCounts.passage``), so that a removal, which arrives as an id alone (a lexicon
        # shard's "remove"), touches only that memory's posting lists (walking the whole
        # vocabulary made every forget cost O(distinct terms of the tenant)), and the feedback
        # reads a memory's counts without a lookup per term.
        self._passages: dict[str, tuple[str, ...]] = {}
        self._terms: dict[str, array[int]] = {}
        # The memory of every passage but a first one (whose key is the memory id itself).
        self._owners: dict[str, str] = {}
        # The label terms of the memories that have any.
        self._labels: dict[str, frozenset[str]] = {}
        self._total_length = 0
        self._entries = 0
        # Bumped by every add and remove that changed something: a query scored at one count
        # is the same query at that count (``Lexicon`` keeps scored queries on it).
        self._changes = 0
        # The same postings as arrays, for scoring a query (``shared.lexical.postings``).
        self._slots = PassageSlots()
        self._arrays = TermArrays()
        # The terms' ids, and each memory's counts over all its passages, once summed (a memory
        # never changes).
        self._summed = SummedCounts()

    def __len__(self) -> int:
        """Memories held."""
        return len(self._passages)

    @property
    def passages(self) -> int:
        return len(self._lengths)

    @property
    def entries(self) -> int:
        """(passage, term) pairs held: what the index's memory grows with, 50-80 bytes each
        (docs/internals.md); a long memory costs about one entry per distinct term of each
        passage."""
        return self._entries

    @property
    def changes(self) -> int:
        """How many adds and removes have changed the index."""
        return self._changes

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._passages

    def add(
        self, memory_id: str, passages: Sequence[TermCounts], labels: Sequence[str] = ()
    ) -> None:
        """Index a memory by its passages' term counts and its labels' terms (each counted
        once more in every passage, see the module docstring); adding one that is already there
        changes nothing (memories are immutable, so the same id always carries the same terms).
        A memory with no terms is held as one empty passage, so it still counts."""
        if memory_id in self._passages:
            return
        self._changes += 1
        if labels:
            self._labels[memory_id] = frozenset(labels)
            passages = [_labelled(counts, labels) for counts in passages or ({},)]
        keys = []
        for position, counts in enumerate(passages or ({},)):
            key = sys.intern(passage_key(memory_id, position))
            length = sum(counts.values())
            self._lengths[key] = length
            slot = self._slots.add(key, length, memory_id)
            self._total_length += length
            self._entries += len(counts)
            for term, count in counts.items():
                # Interned: every posting of a term is keyed by one string, in every tenant.
                self._postings.setdefault(sys.intern(term), {})[key] = count
                self._arrays.added(term, slot, count)
            self._terms[key] = self._summed.passage(counts)
            if position:
                self._owners[key] = memory_id
            keys.append(key)
        self._passages[memory_id] = tuple(keys)

    def counted(self, memory_id: str) -> tuple[TermIds, TermTotals]:
        """A memory's terms over all of its passages (as ids, ``term`` names them), in the order
        first met, with how often each occurs (``shared.lexical.summed``)."""
        found = self._summed.kept(memory_id)
        if found is not None:
            return found
        passages = [self._terms[key] for key in self._passages.get(memory_id, ())]
        return self._summed.summed(memory_id, passages, held=memory_id in self._passages)

    def term(self, term_id: int) -> str:
        """The term ``counted`` gave ``term_id``."""
        return self._summed.term(term_id)

    def weight(self, term: str) -> float:
        """A term's IDF over the passages, as a query weighs it."""
        return scoring.idf(len(self._lengths), len(self._postings.get(term, ())))

    def highest_weight(self) -> float:
        """No term weighs more than this (one held by no passage yet)."""
        return scoring.idf(len(self._lengths), 0)

    def labels(self, memory_id: str) -> frozenset[str]:
        """A memory's label terms (empty when it has none)."""
        return self._labels.get(memory_id, frozenset())

    def remove(self, memory_id: str) -> None:
        """Drop a memory: O(its terms)."""
        if memory_id not in self._passages:
            return
        self._changes += 1
        self._labels.pop(memory_id, None)
        self._summed.forget(memory_id)
        for key in self._passages.pop(memory_id, ()):
            self._owners.pop(key, None)
            self._slots.remove(key)
            self._total_length -= self._lengths.pop(key)
            held = self._terms.pop(key, None)
            for term in self._summed.terms_of(held) if held is not None else ():
                self._arrays.dropped(term)
                posting = self._postings.get(term)
                if posting is not None and posting.pop(key, None) is not None:
                    self._entries -= 1
                    if not posting:
                        del self._postings[term]


def _labelled(counts: TermCounts, labels: Sequence[str]) -> dict[str, int]:
    """A passage's counts with each label term counted once more."""
    found = dict(counts)
    for term in labels:
        found[term] = found.get(term, 0) + 1
    return found
