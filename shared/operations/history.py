"""memory_history and memory_get: a fact's versions (the replacement chain), each with the
probable updates that link it, as far as one request may see them."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from shared.memories.visibility import Visibility, named_memory, versions_shown
from shared.model import Memory
from shared.operations.context import OperationsContext


class Version(msgspec.Struct, frozen=True, kw_only=True):
    """One version in a chain: its body (None once forgotten), what replaced it, and the
    probable updates that link it (the visible memories that probably update it, and those it
    probably updates)."""

    memory_id: str
    memory: Memory | None
    replaced_by: tuple[str, ...]
    expired: bool
    superseded_by: tuple[Memory, ...] = ()
    supersedes: tuple[Memory, ...] = ()


async def history(
    ops: OperationsContext, tenant: str, conversation: str | None, *, memory_id: str
) -> list[Version] | None:
    """Every version of the fact ``memory_id`` belongs to that this request may see,
    newest first; None when it names nothing this request can see."""
    visibility = await ops.visibility(tenant, conversation)
    ids = visibility.replacements.versions(memory_id)
    found = {m.id: m for m in await ops.vectors.get(tenant, list(ids))}
    shown = versions_shown(visibility.replacements, found, visibility.conversation)
    if memory_id not in shown:
        return None  # answered as an id that never existed
    linked = await _linked(ops, tenant, visibility, [m for m in found.values() if m.id in shown])
    return [
        Version(
            memory_id=version_id,
            memory=found.get(version_id),
            replaced_by=visibility.replacements.replaced_by(version_id),
            expired=(m := found.get(version_id)) is not None and m.expired(visibility.now_iso),
            superseded_by=linked.get(version_id, ((), ()))[0],
            supersedes=linked.get(version_id, ((), ()))[1],
        )
        for version_id in ids
        if version_id in shown
    ]


async def get(
    ops: OperationsContext, tenant: str, conversation: str | None, *, memory_id: str
) -> Version | None:
    """One memory whole, with what replaced it and its probable-update links; None when
    this request may not see it (another conversation's note, expired, forgotten, or no
    such id: all answered alike)."""
    visibility = await ops.visibility(tenant, conversation)
    memory = await named_memory(
        ops.vectors, tenant, memory_id, conversation=conversation, now_iso=visibility.now_iso
    )
    if memory is None:
        return None
    linked = await _linked(ops, tenant, visibility, [memory])
    newer, older = linked.get(memory_id, ((), ()))
    return Version(
        memory_id=memory_id,
        memory=memory,
        replaced_by=visibility.replacements.replaced_by(memory_id),
        expired=False,
        superseded_by=newer,
        supersedes=older,
    )


async def _linked(
    ops: OperationsContext, tenant: str, visibility: Visibility, memories: Sequence[Memory]
) -> dict[str, tuple[tuple[Memory, ...], tuple[Memory, ...]]]:
    """Each memory's probable-update links that ``visibility`` may see: (the memories that
    probably update it, the memories it probably updates), newest first."""
    replacements = visibility.replacements
    pairs = {
        m.id: (replacements.superseded_by(m.id), replacements.supersedes(m.id)) for m in memories
    }
    wanted = sorted({i for newer, older in pairs.values() for i in (*newer, *older)})
    if not wanted:
        return {}
    seen = {m.id: m for m in await ops.vectors.get(tenant, wanted) if visibility.sees(m)}
    return {
        memory_id: (
            tuple(seen[i] for i in newer if i in seen),
            tuple(seen[i] for i in older if i in seen),
        )
        for memory_id, (newer, older) in pairs.items()
    }
