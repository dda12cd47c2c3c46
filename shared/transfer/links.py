"""The replacement links an import would add, checked before anything is written (pure).

Each line's ``replaced_by`` becomes records ``<id>#<new id>``. Refused, by line number:

* a line naming its own id (a memory cannot replace itself);
* links that close a cycle, among the file's lines or with records already stored (a
  correction cannot lead back to what it corrects; chains resolve past a stored cycle, but an
  import must not write one);
* a link whose replacement is seen in fewer places than what it replaces (a conversation note
  replacing a project memory, or another conversation's note). remember refuses the same, and
  memory_history relies on it to show a forgotten version only where it could be seen
  (``shared.revisions.forgotten``).

Only links new to the store are judged: importing again what an export wrote changes nothing.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from shared.errors import RefusedError
from shared.revisions import Replacements
from shared.revisions.cycles import cyclic_components


class ImportLinkError(RefusedError):
    """Links the import refuses; nothing was written. ``numbers``: the lines that hold them."""

    field = "replaced_by"

    def __init__(self, numbers: Iterable[int], message: str) -> None:
        self.numbers = tuple(sorted(set(numbers)))
        *rest, last = (str(n) for n in self.numbers)
        where = f"lines {', '.join(rest)} and {last}" if rest else f"line {last}"
        super().__init__(f"{where}: {message}")


class Line(NamedTuple):
    """What the check needs of one line: where it is, what it links, who sees it."""

    number: int
    tenant: str
    memory_id: str
    replaced_by: tuple[str, ...]
    # The conversation a note is seen in; None for a project memory, seen everywhere.
    note_of: str | None


def covers(replacement: str | None, replaced: str | None) -> bool:
    """Whether a memory seen as ``replacement`` is seen wherever one seen as ``replaced`` is
    (each the conversation of a note, or None for a project memory)."""
    return replacement is None or replacement == replaced


class LinkCheck:
    """The lines of one import, gathered in one pass, then judged against the store."""

    def __init__(self) -> None:
        self._first: dict[tuple[str, str], Line] = {}  # each id's first line
        self._linking: list[Line] = []

    def add(self, line: Line) -> None:
        """Raises: ImportLinkError: the line names its own id in ``replaced_by``."""
        if line.memory_id in line.replaced_by:
            raise ImportLinkError(
                [line.number],
                f"`replaced_by` names the line's own id {line.memory_id}: a memory cannot "
                "replace itself",
            )
        self._first.setdefault((line.tenant, line.memory_id), line)
        if line.replaced_by:
            self._linking.append(line)

    def tenants(self) -> list[str]:
        """Every tenant of the file: a line without links may complete a stored one."""
        return sorted({tenant for tenant, _ in self._first})

    def endpoints(self, tenant: str, stored: Replacements) -> list[str]:
        """The ids whose stored bodies the check reads: both ends of every link it judges."""
        ids: set[str] = set()
        for old, new, _ in self._judged(tenant, stored):
            ids.update((old, new))
        return sorted(ids)

    def check(
        self,
        stored: Mapping[str, Replacements],
        seen_by_stored: Mapping[tuple[str, str], str | None],
    ) -> None:
        """``stored``: each tenant's records; ``seen_by_stored``: ``note_of`` of the stored
        memories among the endpoints, which win over the file's (a stored id is not written).

        Raises:
            ImportLinkError: the first refused link, in line order (cycles first).
        """
        for tenant in self.tenants():
            self._check_cycles(tenant, stored[tenant])
        for tenant in self.tenants():
            self._check_reach(tenant, stored[tenant], seen_by_stored)

    def _new(self, tenant: str, stored: Replacements) -> list[tuple[Line, str]]:
        """(line, new id) of every link of the file not stored yet, in line order."""
        return [
            (line, new_id)
            for line in self._linking
            if line.tenant == tenant
            for new_id in line.replaced_by
            if new_id not in stored.successors(line.memory_id)
        ]

    def _judged(self, tenant: str, stored: Replacements) -> list[tuple[str, str, bool]]:
        """(old, new, whether new to the store): the file's new links, and the stored ones
        that touch a line of the file (its body may be about to join them)."""
        judged = [(line.memory_id, new_id, True) for line, new_id in self._new(tenant, stored)]
        judged.extend(
            (old, new, False)
            for old, new in stored.pairs()
            if (tenant, old) in self._first or (tenant, new) in self._first
        )
        return judged

    def _check_cycles(self, tenant: str, stored: Replacements) -> None:
        new = self._new(tenant, stored)
        if not new:
            return
        graph: dict[str, set[str]] = {}
        for old, new_id in stored.pairs():
            graph.setdefault(old, set()).add(new_id)
        for line, new_id in new:
            graph.setdefault(line.memory_id, set()).add(new_id)
        cycles = cyclic_components(graph)
        new_lines = {(line.memory_id, new_id): line.number for line, new_id in new}
        for line, new_id in new:
            component = cycles.get(line.memory_id)
            if component is None or new_id not in component:
                continue
            path = [line.memory_id, *_path(graph, component, new_id, line.memory_id)]
            links = list(itertools.pairwise(path))
            numbers = [new_lines[link] for link in links if link in new_lines]
            also = "" if len(numbers) == len(links) else " with replacement records already stored"
            raise ImportLinkError(
                numbers,
                f"`replaced_by` links form a cycle{also}: {' → '.join(path)}; a correction "
                "cannot lead back to what it corrects",
            )

    def _check_reach(
        self,
        tenant: str,
        stored: Replacements,
        seen_by_stored: Mapping[tuple[str, str], str | None],
    ) -> None:
        def seen(memory_id: str) -> tuple[bool, str | None]:
            key = (tenant, memory_id)
            if key in seen_by_stored:
                return True, seen_by_stored[key]
            line = self._first.get(key)
            return (True, line.note_of) if line is not None else (False, None)

        for old, new_id, new in self._judged(tenant, stored):
            if not new and (tenant, old) in seen_by_stored and (tenant, new_id) in seen_by_stored:
                continue  # both bodies stored already: nothing this import adds
            (old_known, old_seen), (new_known, new_seen) = seen(old), seen(new_id)
            if not (old_known and new_known) or covers(new_seen, old_seen):
                continue
            numbers = [
                line.number for key in (old, new_id) if (line := self._first.get((tenant, key)))
            ]
            raise ImportLinkError(
                numbers,
                f"`replaced_by` makes {new_id}, a conversation note, the replacement of {old}, "
                "which is seen more widely (a project memory, or another conversation's note): "
                "a correction must be seen wherever what it corrects was",
            )


def _path(graph: Mapping[str, set[str]], within: frozenset[str], start: str, end: str) -> list[str]:
    """The shortest path from ``start`` to ``end`` inside one cycle's members, both included."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        at = queue.popleft()
        if at == end:
            break
        for step in sorted(graph.get(at, ())):
            if step in within and step not in previous:
                previous[step] = at
                queue.append(step)
    path: list[str] = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = previous[node]
    return path[::-1]
