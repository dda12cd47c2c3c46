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
from typing import Any, Final

import msgspec
import numpy as np

from shared.lexical import scoring
from shared.lexical.feedback import feedback_terms
from shared.lexical.postings import PassageSlots, TermArrays
from shared.lexical.scoring import K1, B
from shared.lexical.summed import SummedCounts, TermIds, TermTotals
from shared.model.keyword_hit import KeywordHit

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
        "_arrays",
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
        # The same postings as arrays, for scoring a query (``shared.lexical.postings``).
        self._slots = PassageSlots()
        self._arrays = TermArrays()
        # Each memory's counts over all its passages, once summed (a memory never changes).
        self._summed = SummedCounts()

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
            slot = self._slots.add(key, length, memory_id)
            self._total_length += length
            self._entries += len(counts)
            # Interned, so the postings' keys and every passage's term tuple share one string.
            held = tuple(sys.intern(term) for term in counts)
            for term, count in zip(held, counts.values(), strict=True):
                self._postings.setdefault(term, {})[key] = count
                self._arrays.added(term, slot, count)
            self._terms[key] = held
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
        summed: dict[str, int] = {}
        for key in self._passages.get(memory_id, ()):
            for term in self._terms[key]:
                summed[term] = summed.get(term, 0) + self._postings[term][key]
        return self._summed.keep(memory_id, summed, held=memory_id in self._passages)

    def term(self, term_id: int) -> str:
        """The term ``counted`` gave ``term_id``."""
        return self._summed.term(term_id)

    def weight(self, term: str) -> float:
        """A term's IDF over the passages, as a query weighs it."""
        return _idf(len(self._lengths), len(self._postings.get(term, ())))

    def highest_weight(self) -> float:
        """No term weighs more than this (one held by no passage yet)."""
        return _idf(len(self._lengths), 0)

    def labels(self, memory_id: str) -> frozenset[str]:
        """A memory's label terms (empty when it has none)."""
        return self._labels.get(memory_id, frozenset())

    def remove(self, memory_id: str) -> None:
        """Drop a memory: O(its terms)."""
        self._labels.pop(memory_id, None)
        self._summed.forget(memory_id)
        for key in self._passages.pop(memory_id, ()):
            self._owners.pop(key, None)
            self._slots.remove(key)
            self._total_length -= self._lengths.pop(key)
            for term in self._terms.pop(key, ()):
                self._arrays.dropped(term)
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


class KeywordQuery:
    """One query scored against the whole index at once (see ``LexicalIndex.query``). Scoring
    runs when it is built, so a caller can build it while something else is awaited and pick
    the hits it needs afterwards."""

    __slots__ = (
        "_best",
        "_index",
        "_matches",
        "_names",
        "_present",
        "_rare",
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
        postings, slots = index._postings, index._slots
        passages = len(index._lengths)
        documents = len(index)
        self.documents = documents
        self._weights = {t: _idf(passages, len(postings.get(t, ()))) for t in unique}
        self._whole_weight = sum(self._weights.values())
        self._present = [t for t in unique if t in postings]
        skipped = [slots.slot_of[m] for m in skip if m in slots.slot_of]
        one_each = not index._owners
        arrays, holders = [], {}
        for term in self._present:
            held, counts = index._arrays.of(term, postings[term], slots)
            if skipped:
                kept = ~np.isin(slots.owners[held], skipped)
                held, counts = held[kept], counts[kept]
            holders[term] = scoring.holders(held, slots.owners, one_passage_each=one_each)
            arrays.append((held, counts, self._weights[term]))
        average = index._total_length / passages if passages else 0.0
        self._matches = scoring.matches(arrays, slots.lengths, slots.owners, average)
        self._index, self._skip = index, skip
        self._best: tuple[int, dict[str, KeywordHit]] | None = None
        self._unique = frozenset(unique)
        self.spread = self._matches.spread(documents)
        rare_at_most = max(1.0, RARE_SHARE * documents)
        self._rare = {t for t in self._present if 0 < holders[t] <= rare_at_most}
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
        slots, passages = index._slots, index._passages
        members = [
            index._slots.slot_of[memory_id]
            for memory_id in dict.fromkeys(candidates)
            if memory_id not in self._skip and memory_id in passages
        ]
        added, touched = self._added(extra, members)
        own = self._matches.memory_scores(members)
        before = self._matches.passage_scores(touched)
        scores = {slots.key(m): own[m] for m in members if m in own}
        for slot, value in zip(touched, added[touched].tolist(), strict=True):
            memory_id = slots.key(int(slots.owners[slot]))
            summed = before.get(slot, 0.0) + value
            scores[memory_id] = max(scores.get(memory_id, 0.0), summed)
        return scores

    def _added(self, extra: Mapping[str, float], members: list[int]) -> tuple[Any, list[int]]:
        """What the ``extra`` terms add to each passage of the ``members`` (memory slots), by
        passage slot, summed in the terms' order as the per-posting loop did, to the bit (all
        terms' postings in one walk, in the terms' order: ``np.bincount`` adds in walk order);
        and the passages that hold any of them, in slot order."""
        index = self._index
        slots = index._slots
        average = index._total_length / len(index._lengths)
        member = np.zeros(len(slots.owners), dtype=np.bool_)
        member[members] = True
        postings = [index._arrays.of(term, index._postings[term], slots) for term in extra]
        walked = np.concatenate([held for held, _ in postings])
        counts = np.concatenate([counts for _, counts in postings])
        idf = np.repeat(
            [weight * index.weight(term) for term, weight in extra.items()],
            [len(held) for held, _ in postings],
        )
        kept = member[slots.owners[walked]]
        walked, counts, idf = walked[kept], counts[kept], idf[kept]
        norm = K1 * (1 - B + B * slots.lengths[walked] / average)
        added = np.bincount(
            walked, weights=idf * counts * (K1 + 1) / (counts + norm), minlength=len(slots.owners)
        )
        return added, np.flatnonzero(np.bincount(walked, minlength=len(slots.owners))).tolist()

    def _held(self, memory_ids: Sequence[str]) -> list[tuple[bool, ...]]:
        """For each memory, which of the query's terms (in the query's order) it holds."""
        slots, postings = self._index._slots, self._index._postings
        wanted = np.fromiter((slots.slot_of[m] for m in memory_ids), np.int64, len(memory_ids))
        marks = np.zeros(len(slots.owners), dtype=np.bool_)
        rows = []
        for term in self._present:
            held, _ = self._index._arrays.of(term, postings[term], slots)
            marks[:] = False
            marks[slots.owners[held]] = True
            rows.append(marks[wanted])
        if not rows:
            return [() for _ in memory_ids]
        return [tuple(column) for column in np.array(rows).T.tolist()]

    def _hits(self, scores: dict[str, float]) -> tuple[KeywordHit, ...]:
        """Each memory's hit; what follows from the terms it holds is worked out once for all
        the memories that hold the same ones (under a common-word query, most of them)."""
        if not scores:
            return ()
        shared: dict[tuple[bool, ...], dict[str, Any]] = {}
        hits = []
        for (memory_id, score), held in zip(scores.items(), self._held(list(scores)), strict=True):
            same = shared.get(held)
            if same is None:
                same = shared[held] = self._holding(
                    tuple(t for t, h in zip(self._present, held, strict=True) if h)
                )
            labelled = bool(self._unique) and self._unique <= self._index.labels(memory_id)
            hits.append(KeywordHit(memory_id=memory_id, score=score, labelled=labelled, **same))
        return tuple(hits)

    def _holding(self, matched: tuple[str, ...]) -> dict[str, Any]:
        """A hit's fields that follow from the query's terms it holds."""
        return {
            "matched": matched,
            "all_rare": bool(self._rare) and self._rare.issubset(matched),
            "coverage": sum(self._weights[t] for t in matched) / self._whole_weight,
            "names": len(self._names.intersection(matched)),
            "sole": self._sole and self._names.issubset(matched),
        }

    def best(self, top_k: int) -> dict[str, KeywordHit]:
        """The ``top_k`` best hits by memory id, best first; kept for ``result``, so a caller can
        work them out while it waits for something else."""
        if self._best is None or self._best[0] != top_k:
            slots = self._index._slots
            ranked = {slots.key(slot): score for slot, score in self._matches.ranked(top_k)}
            self._best = (top_k, dict(zip(ranked, self._hits(ranked), strict=True)))
        return self._best[1]

    def result(self, *, top_k: int, include: Collection[str] = ()) -> KeywordResult:
        """The ``top_k`` best hits, then any of ``include`` that matched at all (the vector
        leg's candidates, so fusion knows their keyword score too)."""
        best, slot_of = self.best(top_k), self._index._slots.slot_of
        wanted = [m for m in dict.fromkeys(include) if m not in best and m in slot_of]
        found = self._matches.memory_scores([slot_of[m] for m in wanted])
        more = {m: found[slot_of[m]] for m in wanted if slot_of[m] in found}
        return KeywordResult(
            hits=(*best.values(), *self._hits(more)),
            spread=self.spread,
            documents=self.documents,
            names=len(self._names),
        )
