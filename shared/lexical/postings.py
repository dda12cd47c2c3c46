"""The numeric side of a tenant's keyword index: each passage's integer slot with its length and
its memory's slot, and each term's postings as two arrays (slots and counts, in the order the
postings were added), so a query scores a common term's hundreds of passages in one numpy
expression rather than one Python step each. Pure data, no I/O.

The arrays are a cache beside the postings themselves (``LexicalIndex``, term -> {passage key:
count}): a term's arrays are made on the first query that needs them, extended when a memory
holding the term is added, and dropped when one is removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

Slots = npt.NDArray[np.int32]
Counts = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]
_FIRST_CAPACITY: Final = 64


class PassageSlots:
    """Passage key -> slot, and per slot the passage's length and its memory's slot (the slot of
    the memory's first passage, whose key is the memory id). A freed slot is taken again."""

    __slots__ = ("_free", "_keys", "lengths", "owners", "slot_of")

    def __init__(self) -> None:
        self.slot_of: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._free: list[int] = []
        self.lengths: Floats = np.zeros(_FIRST_CAPACITY, dtype=np.float64)
        self.owners: Slots = np.zeros(_FIRST_CAPACITY, dtype=np.int32)

    def add(self, key: str, length: int, memory_id: str) -> int:
        """``key``'s slot; a memory's first passage (``key == memory_id``) comes first."""
        if self._free:
            slot = self._free.pop()
            self._keys[slot] = key
        else:
            slot = len(self._keys)
            self._keys.append(key)
            if slot == len(self.lengths):
                self.lengths = np.resize(self.lengths, 2 * slot)
                self.owners = np.resize(self.owners, 2 * slot)
        self.slot_of[key] = slot
        self.lengths[slot] = length
        self.owners[slot] = slot if key == memory_id else self.slot_of[memory_id]
        return slot

    def remove(self, key: str) -> None:
        slot = self.slot_of.pop(key, None)
        if slot is not None:
            self._keys[slot] = None
            self._free.append(slot)

    def key(self, slot: int) -> str:
        found = self._keys[slot]
        if found is None:
            raise KeyError(slot)
        return found


class TermArrays:
    """Each queried term's postings as (slots, counts) arrays, in its postings' order."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[str, tuple[Slots, Counts]] = {}

    def of(
        self, term: str, posting: Mapping[str, int], slots: PassageSlots
    ) -> tuple[Slots, Counts]:
        held = self._held.get(term)
        if held is None:
            slot_of = slots.slot_of
            size = len(posting)
            held = (
                np.fromiter(map(slot_of.__getitem__, posting), np.int32, size),
                np.fromiter(posting.values(), np.int32, size),
            )
            self._held[term] = held
        return held

    def added(self, term: str, slot: int, count: int) -> None:
        """A passage added to ``term``'s postings (at their end, as a dict appends)."""
        held = self._held.get(term)
        if held is not None:
            self._held[term] = (
                np.append(held[0], np.int32(slot)),
                np.append(held[1], np.int32(count)),
            )

    def dropped(self, term: str) -> None:
        """A passage removed from ``term``'s postings: its arrays are made again when asked."""
        self._held.pop(term, None)
