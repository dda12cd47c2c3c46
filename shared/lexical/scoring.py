"""BM25 over a query's postings arrays (``shared.lexical.postings``): pure arithmetic, no I/O.

Every figure is the one the per-posting loop it replaces computed, to the last bit: each
passage's score sums its terms' contributions in the query's term order (``np.bincount`` adds
in index order), each contribution is the same expression in the same order, a memory keeps its
best passage's score, ties keep the order in which the walk first met each memory (the order a
stable sort kept them in), and the spread sums in that order too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from shared.lexical.postings import Counts, Floats, Slots

K1: Final = 0.9
B: Final = 0.3
Ints = npt.NDArray[np.intp]
_NONE: Final = np.zeros(0, dtype=np.int32)
# A walk at least an eighth as long as the tenant's passages is gathered by counting over them
# (see ``_gathered``): below that, sorting the walk is the cheaper of the two.
_DENSE_WALK: Final = 8
_NO_SCORES: Final = np.zeros(0, dtype=np.float64)
# Past this many times ``top_k`` matches, the best are picked out before they are sorted.
_SORTED_PAST_TOP: Final = 4


class Matches:
    """The passages and memories a query matched (sorted slots), with their scores; a memory's
    ``first`` is where the walk over the query's postings first met it."""

    __slots__ = ("_memory_first", "_passage_scores", "_passages", "memories", "scores")

    def __init__(
        self,
        passages: Slots,
        passage_scores: Floats,
        memories: Slots,
        scores: Floats,
        memory_first: Ints,
    ) -> None:
        self._passages, self._passage_scores = passages, passage_scores
        self.memories, self.scores, self._memory_first = memories, scores, memory_first

    def __len__(self) -> int:
        return len(self.memories)

    @property
    def nbytes(self) -> int:
        """The bytes of its arrays."""
        arrays = (self._passages, self._passage_scores, self.memories, self.scores)
        return sum(a.nbytes for a in arrays) + self._memory_first.nbytes

    def ranked(self, top_k: int) -> list[tuple[int, float]]:
        """The ``top_k`` best memories' slots and scores: by score, ties in the order first met."""
        among = np.arange(len(self.scores))
        if 0 < top_k * _SORTED_PAST_TOP < len(among):
            # Only the memories scoring at least the top_k-th best can be among the best (ties
            # at that score all kept, for the order first met to settle): a common-word query
            # matches thousands.
            least = np.partition(self.scores, len(among) - top_k)[len(among) - top_k]
            among = np.flatnonzero(self.scores >= least)
        order = among[np.lexsort((self._memory_first[among], -self.scores[among]))][:top_k]
        return list(zip(self.memories[order].tolist(), self.scores[order].tolist(), strict=True))

    def memory_scores(self, slots: Sequence[int]) -> dict[int, float]:
        """The scores of those of ``slots`` that matched."""
        return _looked_up(self.memories, self.scores, slots)

    def passage_scores(self, slots: Sequence[int]) -> dict[int, float]:
        """The scores of those passage ``slots`` that matched."""
        return _looked_up(self._passages, self._passage_scores, slots)

    def spread(self, documents: int) -> float:
        """The memories' scores' standard deviation over all ``documents`` (those that matched
        nothing score 0), summed in the order the walk met them."""
        if not documents or not len(self.scores):
            return 0.0
        met = self.scores[np.argsort(self._memory_first, kind="stable")]
        # A cumulative sum adds one after the other, as the walk did (np.sum adds pairwise).
        mean = float(np.cumsum(met)[-1]) / documents
        squares = float(np.cumsum(met * met)[-1]) / documents
        return math.sqrt(max(0.0, squares - mean * mean))


def idf(documents: int, frequency: int) -> float:
    """A term's inverse document frequency among ``documents`` passages, ``frequency`` of
    which hold it (BM25's, never below zero)."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def _looked_up(keys: Slots, values: Floats, slots: Sequence[int]) -> dict[int, float]:
    if not len(keys) or not slots:
        return {}
    wanted = np.asarray(slots, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    found = keys[at] == wanted
    return dict(zip(wanted[found].tolist(), values[at[found]].tolist(), strict=True))


def _gathered(walked: Slots, added: Floats, *, slot_count: int) -> tuple[Slots, Ints, Floats]:
    """Each passage the walk met (ascending), where it first met it, and its contributions
    summed in walk order. A walk long against the tenant's passages (common words, each held by
    hundreds) is gathered by counting over every slot, which is linear; a short one by sorting
    it, which does not touch the slots it never met. Both give the same arrays, to the bit."""
    if len(walked) * _DENSE_WALK >= slot_count:
        passages = np.flatnonzero(np.bincount(walked, minlength=slot_count)).astype(walked.dtype)
        summed = np.bincount(walked, weights=added, minlength=slot_count)[passages]
        first_at = np.full(slot_count, len(walked), dtype=np.intp)
        np.minimum.at(first_at, walked, np.arange(len(walked), dtype=np.intp))
        return passages, first_at[passages], summed.astype(np.float64, copy=False)
    passages, first, inverse = np.unique(walked, return_index=True, return_inverse=True)
    summed = np.bincount(inverse, weights=added, minlength=len(passages))
    return passages, first, summed.astype(np.float64, copy=False)


def matches(
    postings: Sequence[tuple[Slots, Counts, float]],
    lengths: Floats,
    owners: Slots,
    average: float,
) -> Matches:
    """The query's BM25 by passage and by memory, from each term's (slots, counts, IDF)."""
    if not postings:
        return Matches(_NONE, _NO_SCORES, _NONE, _NO_SCORES, np.zeros(0, dtype=np.intp))
    walked = np.concatenate([slots for slots, _, _ in postings])
    added = np.concatenate(
        [
            idf * counts * (K1 + 1) / (counts + K1 * (1 - B + B * lengths[slots] / average))
            for slots, counts, idf in postings
        ]
    )
    passages, first, passage_scores = _gathered(walked, added, slot_count=len(lengths))
    memories_of = owners[passages]
    if np.array_equal(memories_of, passages):
        # Every passage matched is a first one: one passage per memory (the common case).
        return Matches(passages, passage_scores, passages, passage_scores, first)
    memories, of_memory = np.unique(memories_of, return_inverse=True)
    scores = np.zeros(len(memories), dtype=np.float64)
    np.maximum.at(scores, of_memory, passage_scores)
    memory_first = np.full(len(memories), len(walked), dtype=first.dtype)
    np.minimum.at(memory_first, of_memory, first)
    return Matches(passages, passage_scores, memories, scores, memory_first)


def holders(slots: Slots, owners: Slots, *, one_passage_each: bool) -> int:
    """How many memories hold one of ``slots``' passages."""
    if one_passage_each:
        return len(slots)
    # Counted, not sorted: a common word of a long chat is held by thousands of passages, and
    # np.unique sorted them on every query that asked for it.
    return int(np.count_nonzero(np.bincount(owners[slots])))
