"""Memories' terms summed over their passages, as term ids and counts: what the keyword leg's
feedback reads (``shared.lexical.feedback``). Pure data, no I/O.

The feedback asks for its first answer's best eight memories on every recall. Each passage
keeps its terms as ids beside their counts in one int32 array (``SummedCounts.passage``), so a
memory of one passage is read as it is, and one of several is summed with numpy rather than
looked up term by term in the postings (docs/benchmarks.md). The same memories come back on
every question about a subject (a long chat's nineteen questions touch about 150 of them), so
a sum over several passages is kept once made. As two int32 arrays (a term id and a count
each), a sum takes about an eighth of the room a dict of its terms would, and several
memories' sums add up as arrays.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

TermIds = npt.NDArray[np.int32]
TermTotals = npt.NDArray[np.int32]

# How many memories' sums are kept, the oldest dropped first. Per tenant: a 32 KB memory's take
# about 25 KB.
SUMMED_MEMORIES: Final = 256


class SummedCounts:
    """The index's terms as ids (an id is never reused, and a term keeps its id after its last
    memory is gone); each passage's terms as ids with their counts (``passage``), so a memory's
    counts are read without a lookup per term; and each memory's sums over its passages, kept
    for the memories summed last."""

    __slots__ = ("_id_terms", "_kept", "_term_ids")

    def __init__(self) -> None:
        self._kept: dict[str, tuple[TermIds, TermTotals]] = {}
        self._term_ids: dict[str, int] = {}
        self._id_terms: list[str] = []

    def passage(self, counts: Mapping[str, int]) -> array[int]:
        """A passage's terms as ids, then their counts, in one array (each half as long as the
        passage has terms): one object where a tuple of the terms took one, and no larger."""
        term_ids, id_terms = self._term_ids, self._id_terms
        for term in counts:
            if term not in term_ids:
                term_ids[term] = len(id_terms)
                id_terms.append(sys.intern(term))
        # Built from one list, so the array is allocated at its size.
        return array("i", [*map(term_ids.__getitem__, counts), *counts.values()])

    def terms_of(self, passage: array[int]) -> list[str]:
        """The terms of a ``passage`` array, in its order."""
        return [self._id_terms[term_id] for term_id in passage[: len(passage) // 2]]

    def kept(self, memory_id: str) -> tuple[TermIds, TermTotals] | None:
        return self._kept.get(memory_id)

    def summed(
        self, memory_id: str, passages: Sequence[array[int]], *, held: bool
    ) -> tuple[TermIds, TermTotals]:
        """The ``passages`` arrays' counts summed by term, in the order the terms were first
        met; kept only when the index ``held`` the memory and it has several passages (one
        passage's arrays are read as they are)."""
        halves = [np.frombuffer(passage, dtype=np.int32) for passage in passages]
        ids = [half[: len(half) // 2] for half in halves]
        counts = [half[len(half) // 2 :] for half in halves]
        if len(halves) <= 1:
            return (ids[0], counts[0]) if halves else (_NONE, _NONE)
        found = _summed(np.concatenate(ids), np.concatenate(counts))
        if held:
            if len(self._kept) >= SUMMED_MEMORIES:
                del self._kept[next(iter(self._kept))]
            self._kept[memory_id] = found
        return found

    def term(self, term_id: int) -> str:
        return self._id_terms[term_id]

    def forget(self, memory_id: str) -> None:
        self._kept.pop(memory_id, None)


_NONE: Final[npt.NDArray[np.int32]] = np.zeros(0, dtype=np.int32)


def _summed(ids: TermIds, counts: TermTotals) -> tuple[TermIds, TermTotals]:
    """Each id once, in the order first met, with its counts summed."""
    distinct, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    totals = np.bincount(inverse, weights=counts, minlength=len(distinct))
    return distinct[order], totals[order].astype(np.int32)
