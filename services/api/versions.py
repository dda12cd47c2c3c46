"""What memory_history and memory_get read of a fact: its versions (the replacement chain),
each with the probable updates that link it, as far as one request may see them."""

from __future__ import annotations

from collections.abc import Sequence

from services.api.answers import Version
from shared.memories.visibility import Visibility, named_memory, versions_shown
from shared.model import Memory
from shared.storage import VectorStore


async def versions_of(
    vectors: VectorStore, tenant: str, sight: Visibility, memory_id: str
) -> list[Version] | None:
    """Every version of the fact ``memory_id`` belongs to that ``sight`` may see, newest
    first; None when it names nothing this request can see."""
    ids = sight.replacements.versions(memory_id)
    found = {m.id: m for m in await vectors.get(tenant, list(ids))}
    shown = versions_shown(sight.replacements, found, sight.conversation)
    if memory_id not in shown:
        return None  # answered as an id that never existed
    linked = await _linked(vectors, tenant, sight, [m for m in found.values() if m.id in shown])
    return [
        Version(
            memory_id=version_id,
            memory=found.get(version_id),
            replaced_by=sight.replacements.replaced_by(version_id),
            expired=(m := found.get(version_id)) is not None and m.expired(sight.now_iso),
            superseded_by=linked.get(version_id, ((), ()))[0],
            supersedes=linked.get(version_id, ((), ()))[1],
        )
        for version_id in ids
        if version_id in shown
    ]


async def one_version(
    vectors: VectorStore, tenant: str, sight: Visibility, memory_id: str
) -> Version | None:
    """One memory whole, with what replaced it and its links; None when ``sight`` may not
    see it."""
    memory = await named_memory(
        vectors, tenant, memory_id, conversation=sight.conversation, now_iso=sight.now_iso
    )
    if memory is None:
        return None
    newer, older = (await _linked(vectors, tenant, sight, [memory])).get(memory_id, ((), ()))
    return Version(
        memory_id=memory_id,
        memory=memory,
        replaced_by=sight.replacements.replaced_by(memory_id),
        expired=False,
        superseded_by=newer,
        supersedes=older,
    )


async def _linked(
    vectors: VectorStore, tenant: str, sight: Visibility, memories: Sequence[Memory]
) -> dict[str, tuple[tuple[Memory, ...], tuple[Memory, ...]]]:
    """Each memory's probable-update links that ``sight`` may see: (the memories that probably
    update it, the memories it probably updates), newest first."""
    pairs = {
        m.id: (sight.replacements.superseded_by(m.id), sight.replacements.supersedes(m.id))
        for m in memories
    }
    wanted = sorted({i for newer, older in pairs.values() for i in (*newer, *older)})
    if not wanted:
        return {}
    seen = {m.id: m for m in await vectors.get(tenant, wanted) if sight.sees(m)}
    return {
        memory_id: (
            tuple(seen[i] for i in newer if i in seen),
            tuple(seen[i] for i in older if i in seen),
        )
        for memory_id, (newer, older) in pairs.items()
    }
