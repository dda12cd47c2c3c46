"""One query scored against a tenant's keyword index (``shared.lexical.index``) at once: BM25
over its terms' postings arrays, each matched memory's hit, and the query's scores again with
the terms its best results share (``shared.lexical.feedback``). Pure arithmetic over the index,
no I/O; the index's data is read in place, as one object of the same package."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec
import numpy as np
from msgspec.structs import replace

from shared.lexical import scoring
from shared.lexical.feedback import feedback_terms
from shared.lexical.index import LexicalIndex
from shared.lexical.scoring import K1, B
from shared.model.keyword_hit import KeywordHit

# A term held by at most this share of the tenant's memories is rare: it says something about
# the few that hold it (see KeywordHit.all_rare and KeywordResult.names).
RARE_SHARE: Final = 0.05
# What a query's hits and kept answers hold beside its score arrays, allowed for rather than
# measured: about two hundred hits of a few hundred bytes each.
_ANSWER_BYTES: Final = 64 * 1024


class KeywordResult(msgspec.Struct, frozen=True, kw_only=True):
    """The best hits, and the spread of the query's score over all of the tenant's memories
    (0 when nothing matched): what fusion divides by, so a score is read against the tenant."""

    hits: tuple[KeywordHit, ...]
    spread: float
    documents: int
    # The query's names (``tokens.names``: e1042, snake_case, a/b.py, --flag) that some memory of
    # the tenant holds whole and at most a rare share of them do: the names that pick a memory.
    names: int = 0


class KeywordQuery:
    """One query scored against the whole index at once. Scoring runs when it is built, so a
    caller can build it while something else is awaited and pick the hits it needs afterwards.

    While the index has not changed since (``reads``), the same query gives the same answers:
    ``Lexicon`` keeps it for a question asked again, and ``result`` and ``fed_back`` keep their
    last answer for the same arguments (a question asked again in the same conversation asks
    them the same)."""

    __slots__ = (
        "_best",
        "_index",
        "_last_fed_back",
        "_last_result",
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
        "changes",
        "documents",
        "spread",
    )

    def __init__(
        self,
        index: LexicalIndex,
        query_terms: Iterable[str],
        *,
        names: Collection[str] = (),
        skip: Collection[str] = (),
    ) -> None:
        """Score every memory of ``index`` holding a term of the query (each term counted once);
        memories in ``skip`` are left out as if they were not indexed. ``names`` are the query's
        whole names (``tokens.names``), which must be among its terms."""
        unique = list(dict.fromkeys(query_terms))
        postings, slots = index._postings, index._slots
        passages = len(index._lengths)
        documents = len(index)
        self.documents = documents
        self._weights = {t: index.weight(t) for t in unique}
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
        self.changes = index.changes
        self._best: tuple[int, dict[str, KeywordHit]] | None = None
        self._last_result: tuple[tuple[int, tuple[str, ...]], KeywordResult] | None = None
        self._last_fed_back: (
            tuple[tuple[tuple[str, ...], tuple[str, ...]], dict[str, float]] | None
        ) = None
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

    def reads(self, index: LexicalIndex) -> bool:
        """Whether this query was scored on ``index`` as it is now."""
        return self._index is index and self.changes == index.changes

    @property
    def nbytes(self) -> int:
        """About what keeping this query holds."""
        return self._matches.nbytes + _ANSWER_BYTES

    def fed_back(self, feedback: Sequence[str], candidates: Iterable[str]) -> dict[str, float]:
        """The ``candidates``' scores for this query with the terms its best results share
        (``feedback``: their memory ids; see ``shared.lexical.feedback``) added at a fraction of
        its own weight; empty when there is nothing to add. A memory is still scored by its best
        passage. Only the candidates are scored: the feedback reorders what the two legs found
        rather than searching again, so it costs a few lookups per candidate, not a second walk
        of the postings and a second sort of every match. The answer is not to be changed: it is
        kept for the same arguments."""
        asked = (tuple(feedback), tuple(candidates))
        if self._last_fed_back is not None and self._last_fed_back[0] == asked:
            return self._last_fed_back[1]
        scores = self._fed_back(*asked)
        self._last_fed_back = (asked, scores)
        return scores

    def _fed_back(self, feedback: Sequence[str], candidates: Sequence[str]) -> dict[str, float]:
        extra = feedback_terms(self._index, feedback, self._weights)
        if not extra:
            return {}
        index = self._index
        slots, passages = index._slots, index._passages
        members = [
            slots.slot_of[memory_id]
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
        passage slot, and the passages that hold any of them, in slot order. All terms'
        postings are walked at once in the terms' order, and ``np.bincount`` adds in walk order,
        so each passage's sum is the same to the bit as adding the terms one at a time."""
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
        the memories that hold the same ones (under a common-word query, most of them), as a
        hit each memory's copies with its own id and score (a copy costs a quarter of building
        a hit from keywords)."""
        if not scores:
            return ()
        holding: dict[tuple[bool, ...], KeywordHit] = {}
        hits = []
        for (memory_id, score), held in zip(scores.items(), self._held(list(scores)), strict=True):
            same = holding.get(held)
            if same is None:
                same = holding[held] = self._holding(
                    tuple(t for t, h in zip(self._present, held, strict=True) if h)
                )
            labelled = bool(self._unique) and self._unique <= self._index.labels(memory_id)
            hits.append(replace(same, memory_id=memory_id, score=score, labelled=labelled))
        return tuple(hits)

    def _holding(self, matched: tuple[str, ...]) -> KeywordHit:
        """A hit of no memory yet, with the fields that follow from the query's terms it holds."""
        return KeywordHit(
            memory_id="",
            score=0.0,
            matched=matched,
            all_rare=bool(self._rare) and self._rare.issubset(matched),
            coverage=sum(self._weights[t] for t in matched) / self._whole_weight,
            names=len(self._names.intersection(matched)),
            sole=self._sole and self._names.issubset(matched),
        )

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
        asked = (top_k, tuple(include))
        if self._last_result is not None and self._last_result[0] == asked:
            return self._last_result[1]
        answer = self._result(top_k, asked[1])
        self._last_result = (asked, answer)
        return answer

    def _result(self, top_k: int, include: Sequence[str]) -> KeywordResult:
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
