"""Where the versions of a fact stand in a ranking: a memory another one probably updates (a
``supersedes`` link, ``shared.revisions``) comes directly below its newer version, wherever
either was ranked, and the newer is brought up beside it when only the older was relevant
enough (pure).

The link is the evidence: remember found the newer text restating the older with another value.
Relevance alone cannot order the two: the older often matches the question's words better (it
was there first, and questions are asked in its words), and by more than any band a rule on
scores could allow without also moving unrelated memories. Memories no link joins are ordered
by ``shared.ranking.versions``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


def newest_first(
    start: str, links: Mapping[str, Sequence[str]], present: Collection[str]
) -> list[str]:
    """The versions of ``start`` reachable along ``links`` among ``present``, newest first (ids
    are ULIDs: their order is the order they were written in): its newer versions along links
    from old id to newer ids, its older ones along links turned around; a cycle ends the walk."""
    seen = {start}
    frontier = [start]
    found: list[str] = []
    while frontier:
        for newer in links.get(frontier.pop(), ()):
            if newer in present and newer not in seen:
                seen.add(newer)
                found.append(newer)
                frontier.append(newer)
    return sorted(found, reverse=True)


def linked_first(
    order: Sequence[int],
    ids: Sequence[str],
    links: Mapping[str, Sequence[str]],
    *,
    limit: int,
) -> list[int]:
    """``order`` (positions into ``ids``, best first) with each memory's newer versions placed
    directly above it (newest first), taken from anywhere in ``ids``, and its older versions
    among the first ``limit`` of ``order`` directly below it, cut to ``limit``. An older version
    the ranking would not have shown is not brought in: it would take the place of a memory
    more relevant than it to say what is no longer so."""
    position = {memory_id: i for i, memory_id in enumerate(ids)}
    shown = {ids[i] for i in order[:limit]}
    older_links = _older_links(links, shown)
    placed: list[int] = []
    done: set[int] = set()

    def place(j: int) -> None:
        if j not in done:
            done.add(j)
            placed.append(j)

    for i in order:
        for newer in newest_first(ids[i], links, position):
            place(position[newer])
        place(i)
        for older in newest_first(ids[i], older_links, shown):
            place(position[older])
        if len(placed) >= limit:
            break
    return placed[:limit]


def _older_links(
    links: Mapping[str, Sequence[str]], shown: Collection[str]
) -> dict[str, list[str]]:
    """``links`` (old id → newer ids) turned around, between ``shown`` memories only: newer id
    → the older ids it probably updates."""
    older: dict[str, list[str]] = {}
    for old, newer_ids in links.items():
        if old not in shown:
            continue
        for newer in newer_ids:
            if newer in shown:
                older.setdefault(newer, []).append(old)
    return older


def shown_links(
    ids: Sequence[str], links: Mapping[str, Sequence[str]]
) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """For each of ``ids`` (the results, in order): the results that probably update it, and
    the results it probably updates."""
    shown = set(ids)
    newer = [tuple(n for n in links.get(memory_id, ()) if n in shown) for memory_id in ids]
    older_of: dict[str, list[str]] = {}
    for memory_id, found in zip(ids, newer, strict=True):
        for n in found:
            older_of.setdefault(n, []).append(memory_id)
    return newer, [tuple(older_of.get(memory_id, ())) for memory_id in ids]
