"""Replacement chains: which memories a tenant's replacement records retire, and the versions
of one fact, read from the records alone (pure). Beside them, the probable updates remember
linked (an older memory that stays current, ranked below the newer one)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from shared.model.keys import RevisionKind
from shared.revisions.cycles import cyclic_components


def reached(starts: Iterable[str], step: Callable[[str], Iterable[str]]) -> set[str]:
    """Every id ``step`` leads to from ``starts``, in any number of steps; a start only when a
    step leads back to it."""
    found: set[str] = set()
    frontier = list(starts)
    while frontier:
        for linked in step(frontier.pop()):
            if linked not in found:
                found.add(linked)
                frontier.append(linked)
    return found


class Replacements:
    """One tenant's replacement records as (old id, new id) pairs.

    A memory with a successor is retired: recall, list, stats and dedup skip it. Two
    replacements of one memory (written concurrently by two processes) both stand, so neither
    correction is lost; the chain then has two current versions.

    A record that lies on a cycle (X → X, or Y → Z → Y, which an import could store before it
    checked its links) is void: it retires nothing and leads nowhere, while every other record
    stands. So every member of a cycle is current unless a record leading out of the cycle
    retires it, chains always resolve (the records that stand form no cycle), and nothing is
    hidden by a record that says a memory replaced itself. Dropping one record of the cycle by
    some order instead would pick a winner the records give no ground for. ``versions`` still
    links the members, so memory_history shows them together.
    """

    __slots__ = ("_cycles", "_kept", "_linked_newer", "_linked_older", "_newer", "_older")

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._newer: dict[str, set[str]] = {}
        self._older: dict[str, set[str]] = {}
        # Each memory on a cycle, mapped to its cycle's members; None until asked after a change.
        self._cycles: dict[str, frozenset[str]] | None = None
        # Probable updates (old → new) and the ones the caller undid ("both stay current").
        self._linked_newer: dict[str, set[str]] = {}
        self._linked_older: dict[str, set[str]] = {}
        self._kept: set[tuple[str, str]] = set()
        for old_id, new_id in pairs:
            self.add(old_id, new_id)

    def __len__(self) -> int:
        return sum(len(newer) for newer in self._newer.values())

    def add(self, old_id: str, new_id: str) -> None:
        newer = self._newer.setdefault(old_id, set())
        if new_id in newer:
            return  # the view adds this process's own records on every read: keep the cycles
        newer.add(new_id)
        self._older.setdefault(new_id, set()).add(old_id)
        self._cycles = None

    def record(self, old_id: str, new_id: str, kind: RevisionKind) -> None:
        """Add one record of any kind (``shared.model.keys.parse_revision_key``)."""
        if kind == "replaces":
            self.add(old_id, new_id)
        elif kind == "supersedes":
            self._linked_newer.setdefault(old_id, set()).add(new_id)
            self._linked_older.setdefault(new_id, set()).add(old_id)
        else:
            self._kept.add((old_id, new_id))

    def superseded_by(self, memory_id: str) -> tuple[str, ...]:
        """The memories that probably update this one (links not undone), newest first."""
        newer = self._linked_newer.get(memory_id)
        if not newer:
            return ()  # the hot path: recall asks this of every candidate
        return tuple(sorted((n for n in newer if (memory_id, n) not in self._kept), reverse=True))

    def supersedes(self, memory_id: str) -> tuple[str, ...]:
        """The memories this one probably updates (links not undone), newest first."""
        older = self._linked_older.get(memory_id, ())
        return tuple(sorted((o for o in older if (o, memory_id) not in self._kept), reverse=True))

    def links(self) -> list[tuple[str, str]]:
        """Every probable update that stands, as (old id, new id)."""
        return [
            (old, new)
            for old, newer in self._linked_newer.items()
            for new in sorted(newer)
            if (old, new) not in self._kept
        ]

    def link_records(self, memory_id: str) -> list[tuple[str, str, RevisionKind]]:
        """Every link record naming this memory as the older one, undone or not: what the
        expirer deletes with the memory."""
        newer = sorted(self._linked_newer.get(memory_id, ()))
        found: list[tuple[str, str, RevisionKind]] = [(memory_id, n, "supersedes") for n in newer]
        found.extend((memory_id, n, "kept") for n in newer if (memory_id, n) in self._kept)
        return found

    def pairs(self) -> list[tuple[str, str]]:
        return [(old, new) for old, newer in self._newer.items() for new in sorted(newer)]

    def successors(self, memory_id: str) -> tuple[str, ...]:
        """The new ids of the records naming this memory as the replaced one, void or not:
        the records as stored (what the expirer deletes with the memory)."""
        return tuple(sorted(self._newer.get(memory_id, ())))

    def retired(self, memory_id: str) -> bool:
        if memory_id not in self._newer:
            return False  # the hot path: list and stats ask this of every key
        return bool(self._standing(memory_id))

    def replaced_by(self, memory_id: str) -> tuple[str, ...]:
        return tuple(sorted(self._standing(memory_id)))

    def replaces(self, memory_id: str) -> tuple[str, ...]:
        """The memories this one replaced, by records that stand."""
        older = self._older.get(memory_id, ())
        return tuple(sorted(old for old in older if memory_id in self._standing(old)))

    def newer(self, memory_id: str) -> set[str]:
        """Every version newer than this one, along the records that stand."""
        return reached([memory_id], self._standing)

    def current(self, memory_id: str) -> tuple[str, ...]:
        """The newest versions this one leads to (A → B → C gives C; the memory itself when
        nothing replaced it), oldest first. Never empty: every walk along the standing records
        ends at a memory nothing retires."""
        leads_to = self.newer(memory_id) | {memory_id}
        return tuple(sorted(v for v in leads_to if not self.retired(v)))

    def versions(self, memory_id: str) -> tuple[str, ...]:
        """Every memory connected to this one by replacements, itself included, newest first
        (ids are ULIDs, so their order is the order they were written in)."""

        def either_way(at: str) -> set[str]:
            return self._newer.get(at, set()) | self._older.get(at, set())

        return tuple(sorted(reached([memory_id], either_way) | {memory_id}, reverse=True))

    def _standing(self, memory_id: str) -> set[str]:
        """The successors named by records that are not void (see the class docstring)."""
        newer = self._newer.get(memory_id)
        if not newer:
            return set()
        if self._cycles is None:
            self._cycles = cyclic_components(self._newer)
        cycle = self._cycles.get(memory_id)
        return newer if cycle is None else newer - cycle


EMPTY: Final = Replacements()
