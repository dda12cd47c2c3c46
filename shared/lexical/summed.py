"""Memories' terms summed over their passages, as term ids and counts, kept for the memories
summed last: what the keyword leg's feedback reads (``shared.lexical.feedback``). Pure data, no
I/O.

The feedback asks for its first answer's best eight memories on every recall, and the same
memories come back on every question about a subject: a long chat's nineteen questions touch
about 150 of them. A long message's few thousand terms took most of the feedback's time to sum,
so each memory's sum is kept once made. Kept as two int32 arrays (a term id and a count each),
a sum takes about an eighth of the room a dict of its terms would, and several memories' sums
add up as arrays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

TermIds = npt.NDArray[np.int32]
TermTotals = npt.NDArray[np.int32]

# How many memories' sums are kept, the oldest dropped first. Per tenant: a 32 KB memory's take
# about 25 KB.
SUMMED_MEMORIES: Final = 256


class SummedCounts:
    """Each memory's ``(term ids, counts)``, in the order its terms were first met; ``term``
    names an id. An id is never reused, and a term keeps its id after its last memory is gone."""

    __slots__ = ("_id_terms", "_kept", "_term_ids")

    def __init__(self) -> None:
        self._kept: dict[str, tuple[TermIds, TermTotals]] = {}
        self._term_ids: dict[str, int] = {}
        self._id_terms: list[str] = []

    def kept(self, memory_id: str) -> tuple[TermIds, TermTotals] | None:
        return self._kept.get(memory_id)

    def keep(
        self, memory_id: str, summed: Mapping[str, int], *, held: bool
    ) -> tuple[TermIds, TermTotals]:
        """``summed`` as ids and counts; kept only when the index ``held`` the memory."""
        term_ids = self._term_ids
        for term in [term for term in summed if term not in term_ids]:
            term_ids[term] = len(self._id_terms)
            self._id_terms.append(term)
        found = (
            np.fromiter(map(term_ids.__getitem__, summed), np.int32, len(summed)),
            np.fromiter(summed.values(), np.int32, len(summed)),
        )
        if held:
            if len(self._kept) >= SUMMED_MEMORIES:
                del self._kept[next(iter(self._kept))]
            self._kept[memory_id] = found
        return found

    def term(self, term_id: int) -> str:
        return self._id_terms[term_id]

    def forget(self, memory_id: str) -> None:
        self._kept.pop(memory_id, None)
