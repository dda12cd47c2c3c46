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
    """The newer versions of ``start`` reachable along ``links`` (old id → newer ids) among
    ``present``, newest first (ids are ULIDs: their order is the order they were written in);
    a cycle ends the walk."""
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
    directly above it (newest first), taken from anywhere in ``ids``, cut to ``limit``. A newer
    version that was ranked above its older one stays where it was."""
    position = {memory_id: i for i, memory_id in enumerate(ids)}
    placed: list[int] = []
    done: set[int] = set()
    for i in order:
        for newer in newest_first(ids[i], links, position):
            j = position[newer]
            if j not in done:
                done.add(j)
                placed.append(j)
        if i not in done:
            done.add(i)
            placed.append(i)
        if len(placed) >= limit:
            break
    return placed[:limit]


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
