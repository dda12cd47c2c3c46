"""Replacement chains: which memories a tenant's replacement records retire, and the versions
of one fact, read from the records alone (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final


class Replacements:
    """One tenant's replacement records as (old id, new id) pairs.

    A memory with a successor is retired: recall, list, stats and dedup skip it. Two
    replacements of one memory (written concurrently by two processes) both stand, so neither
    correction is lost; the chain then has two current versions.
    """

    __slots__ = ("_newer", "_older")

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._newer: dict[str, set[str]] = {}
        self._older: dict[str, set[str]] = {}
        for old_id, new_id in pairs:
            self.add(old_id, new_id)

    def __len__(self) -> int:
        return sum(len(newer) for newer in self._newer.values())

    def add(self, old_id: str, new_id: str) -> None:
        self._newer.setdefault(old_id, set()).add(new_id)
        self._older.setdefault(new_id, set()).add(old_id)

    def pairs(self) -> list[tuple[str, str]]:
        return [(old, new) for old, newer in self._newer.items() for new in sorted(newer)]

    def retired(self, memory_id: str) -> bool:
        return memory_id in self._newer

    def replaced_by(self, memory_id: str) -> tuple[str, ...]:
        return tuple(sorted(self._newer.get(memory_id, ())))

    def current(self, memory_id: str) -> tuple[str, ...]:
        """The newest versions this one leads to (A → B → C gives C; the memory itself when
        nothing replaced it), oldest first."""
        seen = {memory_id}
        frontier = [memory_id]
        while frontier:
            for newer in self._newer.get(frontier.pop(), ()):
                if newer not in seen:
                    seen.add(newer)
                    frontier.append(newer)
        return tuple(sorted(v for v in seen if not self.retired(v)))

    def versions(self, memory_id: str) -> tuple[str, ...]:
        """Every memory connected to this one by replacements, itself included, newest first
        (ids are ULIDs, so their order is the order they were written in)."""
        seen = {memory_id}
        frontier = [memory_id]
        while frontier:
            at = frontier.pop()
            for linked in self._newer.get(at, set()) | self._older.get(at, set()):
                if linked not in seen:
                    seen.add(linked)
                    frontier.append(linked)
        return tuple(sorted(seen, reverse=True))


EMPTY: Final = Replacements()

__all__ = ["EMPTY", "Replacements"]
