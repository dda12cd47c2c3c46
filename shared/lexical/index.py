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
"""

from __future__ import annotations

import math
import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Final

import msgspec

from shared.lexical.feedback import feedback_terms
from shared.model.keyword_hit import KeywordHit

K1: Final = 0.9
B: Final = 0.3
# A term held by at most this share of the tenant's memories is rare: it says something about
# the few that hold it (see KeywordHit.all_rare and KeywordResult.names).
RARE_SHARE: Final = 0.05
# Joins a memory id and a passage's position in a passage's key; a ULID never holds it.
_PASSAGE_MARK: Final = "#"

TermCounts = Mapping[str, int]


def passage_key(memory_id: str, position: int) -> str:
    """The first passage is keyed by the memory id itself: a short memory costs no more than
    it did before passages."""
    return memory_id if position == 0 else f"{memory_id}{_PASSAGE_MARK}{position}"


class KeywordResult(msgspec.Struct, frozen=True, kw_only=True):
    """The best hits, and the spread of the query's score over all of the tenant's memories
    (0 when nothing matched): what fusion divides by, so a score is read against the tenant."""

    hits: tuple[KeywordHit, ...]
    spread: float
    documents: int
    # The query's names (``tokens.names``: e1042, snake_case, a/b.py, --flag) that some memory of
    # the tenant holds whole and at most a rare share of them do: the names that pick a memory.
    names: int = 0


def _idf(documents: int, frequency: int) -> float:
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


class LexicalIndex:
    """Postings per term over passages; add and remove are O(terms of the memory)."""

    __slots__ = (
        "_entries",
        "_labels",
        "_lengths",
        "_owners",
        "_passages",
        "_postings",
        "_terms",
        "_total_length",
    )

    def __init__(self) -> None:
        # term -> {passage key: count}
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        # Each memory's passage keys, and each passage's terms (the same string objects the
        # postings are keyed by), so that a removal, which arrives as an id alone (a lexicon
        # shard's "remove"), touches only that memory's posting lists: walking the whole
        # vocabulary made every forget cost O(distinct terms of the tenant).
        self._passages: dict[str, tuple[str, ...]] = {}
        self._terms: dict[str, tuple[str, ...]] = {}
        # The memory of every passage but a first one (whose key is the memory id itself).
        self._owners: dict[str, str] = {}
        # The label terms of the memories that have any.
        self._labels: dict[str, frozenset[str]] = {}
        self._total_length = 0
        self._entries = 0

    def __len__(self) -> int:
        """Memories held."""
        return len(self._passages)

    @property
    def passages(self) -> int:
        return len(self._lengths)

    @property
    def entries(self) -> int:
        """(passage, term) pairs held: what the index's memory grows with, ~60 bytes each
        (tracemalloc: 3.9 MiB for 5,882 LoCoMo turns, 69,607 entries, each turn one passage).
        About 6.6 MiB per 10,000 one-sentence memories; a long memory costs about one entry
        per distinct term of each passage."""
        return self._entries

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
        if labels:
            self._labels[memory_id] = frozenset(labels)
            passages = [_labelled(counts, labels) for counts in passages or ({},)]
        keys = []
        for position, counts in enumerate(passages or ({},)):
            key = sys.intern(passage_key(memory_id, position))
            length = sum(counts.values())
            self._lengths[key] = length
            self._total_length += length
            self._entries += len(counts)
            # Interned, so the postings' keys and every passage's term tuple share one string.
            held = tuple(sys.intern(term) for term in counts)
            for term, count in zip(held, counts.values(), strict=True):
                self._postings.setdefault(term, {})[key] = count
            self._terms[key] = held
            if position:
                self._owners[key] = memory_id
            keys.append(key)
        self._passages[memory_id] = tuple(keys)

    def counts(self, memory_id: str) -> dict[str, int]:
        """A memory's terms over all of its passages, with how often each occurs."""
        found: dict[str, int] = {}
        for key in self._passages.get(memory_id, ()):
            for term in self._terms[key]:
                found[term] = found.get(term, 0) + self._postings[term][key]
        return found

    def weight(self, term: str) -> float:
        """A term's IDF over the passages, as a query weighs it."""
        return _idf(len(self._lengths), len(self._postings.get(term, ())))

    def labels(self, memory_id: str) -> frozenset[str]:
        """A memory's label terms (empty when it has none)."""
        return self._labels.get(memory_id, frozenset())

    def remove(self, memory_id: str) -> None:
        """Drop a memory: O(its terms)."""
        self._labels.pop(memory_id, None)
        for key in self._passages.pop(memory_id, ()):
            self._owners.pop(key, None)
            self._total_length -= self._lengths.pop(key)
            for term in self._terms.pop(key, ()):
                posting = self._postings.get(term)
                if posting is not None and posting.pop(key, None) is not None:
                    self._entries -= 1
                    if not posting:
                        del self._postings[term]

    def query(
        self,
        query_terms: Iterable[str],
        *,
        names: Collection[str] = (),
        skip: Collection[str] = (),
    ) -> KeywordQuery:
        """Score every memory holding a term of the query (each term counted once); memories
        in ``skip`` are left out as if they were not indexed. ``names`` are the query's whole
        names (``tokens.names``), which must be among its terms."""
        return KeywordQuery(self, list(dict.fromkeys(query_terms)), names, skip)


def _labelled(counts: TermCounts, labels: Sequence[str]) -> dict[str, int]:
    """A passage's counts with each label term counted once more."""
    found = dict(counts)
    for term in labels:
        found[term] = found.get(term, 0) + 1
    return found


def _best_passages(by_passage: dict[str, float], owners: dict[str, str]) -> dict[str, float]:
    """Each memory's score: its best passage's."""
    scores: dict[str, float] = {}
    for key, value in by_passage.items():
        memory_id = owners.get(key, key)
        if value > scores.get(memory_id, 0.0):
            scores[memory_id] = value
    return scores


def _spread(scores: dict[str, float], documents: int) -> float:
    """The scores' standard deviation over all ``documents``: memories without a match score
    0, so the spread over all of them needs only the matches."""
    if not documents or not scores:
        return 0.0
    mean = sum(scores.values()) / documents
    squares = sum(score * score for score in scores.values()) / documents
    return math.sqrt(max(0.0, squares - mean * mean))


class KeywordQuery:
    """One query scored against the whole index at once (see ``LexicalIndex.query``). Scoring
    runs when it is built, so a caller can build it while something else is awaited and pick
    the hits it needs afterwards."""

    __slots__ = (
        "_by_passage",
        "_index",
        "_matched",
        "_names",
        "_rare",
        "_scores",
        "_skip",
        "_sole",
        "_unique",
        "_weights",
        "_whole_weight",
        "absent_names",
        "documents",
        "spread",
    )

    def __init__(
        self,
        index: LexicalIndex,
        unique: list[str],
        names: Collection[str],
        skip: Collection[str],
    ) -> None:
        postings, lengths = index._postings, index._lengths
        passages = len(lengths)
        documents = len(index)
        self.documents = documents
        self._weights = {t: _idf(passages, len(postings.get(t, ()))) for t in unique}
        self._whole_weight = sum(self._weights.values())
        # Per passage first; a memory keeps its best passage's score.
        by_passage: dict[str, float] = {}
        self._matched: dict[str, list[str]] = {}
        holders: dict[str, int] = {}
        present = [t for t in unique if t in postings]
        average = index._total_length / passages if passages else 0.0
        owners = index._owners
        matched = self._matched
        for term in present:
            idf = self._weights[term]
            held = 0
            for key, count in postings[term].items():
                # A first passage is keyed by its memory's id: the common case finds no owner.
                memory_id = owners.get(key, key)
                if memory_id in skip:
                    continue
                norm = K1 * (1 - B + B * lengths[key] / average)
                by_passage[key] = by_passage.get(key, 0.0) + idf * count * (K1 + 1) / (count + norm)
                # Terms are taken one at a time: a memory already counted for this one has it
                # last in its list (cheaper than a set per term).
                found = matched.get(memory_id)
                if found is None:
                    matched[memory_id] = [term]
                elif found[-1] != term:
                    found.append(term)
                else:
                    continue
                held += 1
            holders[term] = held
        self._index, self._skip, self._by_passage = index, skip, by_passage
        self._unique = frozenset(unique)
        self._scores = _best_passages(by_passage, owners)
        self.spread = _spread(self._scores, documents)
        rare_at_most = max(1.0, RARE_SHARE * documents)
        self._rare = {t for t in present if 0 < holders[t] <= rare_at_most}
        # A name most memories hold (``node.js`` in a Node project) picks none of them out.
        self._names = self._rare.intersection(names)
        self._sole = bool(self._names) and all(holders[t] == 1 for t in self._names)
        # Names of the query that no memory holds (``E1042`` where only E1024 is stored): what
        # the query asks for by name is not stored, whatever else resembles it.
        self.absent_names = sum(1 for t in set(names) if holders.get(t, 0) == 0)

    def fed_back(self, feedback: Sequence[str], candidates: Iterable[str]) -> dict[str, float]:
        """The ``candidates``' scores for this query with the terms its best results share
        (``feedback``: their memory ids; see ``shared.lexical.feedback``) added at a fraction of
        its own weight; empty when there is nothing to add. A memory is still scored by its best
        passage. Only the candidates are scored: the feedback reorders what the two legs found
        rather than searching again, so it costs a few lookups per candidate, not a second walk
        of the postings and a second sort of every match."""
        extra = feedback_terms(self._index, feedback, self._weights)
        if not extra:
            return {}
        index = self._index
        postings, lengths, passages = index._postings, index._lengths, index._passages
        average = index._total_length / len(lengths)
        owner = {
            key: memory_id
            for memory_id in candidates
            if memory_id not in self._skip
            for key in passages.get(memory_id, ())
        }
        added: dict[str, float] = {}
        for term, weight in extra.items():
            posting, idf = postings[term], weight * index.weight(term)
            # The shorter side is walked: a rare term's few passages, or the candidates'.
            if len(posting) < len(owner):
                held = [(key, count) for key, count in posting.items() if key in owner]
            else:
                held = [(key, posting[key]) for key in owner if key in posting]
            for key, count in held:
                norm = K1 * (1 - B + B * lengths[key] / average)
                added[key] = added.get(key, 0.0) + idf * count * (K1 + 1) / (count + norm)
        own, before = self._scores, self._by_passage
        scores = {m: own[m] for m in set(owner.values()) if m in own}
        for key, value in added.items():
            memory_id = owner[key]
            scores[memory_id] = max(scores.get(memory_id, 0.0), before.get(key, 0.0) + value)
        return scores

    def _hit(self, memory_id: str) -> KeywordHit:
        matched = self._matched[memory_id]
        return KeywordHit(
            memory_id=memory_id,
            score=self._scores[memory_id],
            matched=tuple(matched),
            all_rare=bool(self._rare) and self._rare.issubset(matched),
            coverage=sum(self._weights[t] for t in matched) / self._whole_weight,
            names=len(self._names.intersection(matched)),
            sole=self._sole and self._names.issubset(matched),
            labelled=bool(self._unique) and self._unique <= self._index.labels(memory_id),
        )

    def result(self, *, top_k: int, include: Collection[str] = ()) -> KeywordResult:
        """The ``top_k`` best hits, then any of ``include`` that matched at all (the vector
        leg's candidates, so fusion knows their keyword score too)."""
        best = sorted(self._scores, key=self._scores.__getitem__, reverse=True)[:top_k]
        chosen = set(best)
        best += [m for m in dict.fromkeys(include) if m in self._scores and m not in chosen]
        return KeywordResult(
            hits=tuple(self._hit(m) for m in best),
            spread=self.spread,
            documents=self.documents,
            names=len(self._names),
        )
