"""What one request may see: its conversation's notes and everyone's project memories, minus
what has expired and what a replacement retired; and what it may name (``replaces``, forget,
get, history) by id, read from the stores."""

from __future__ import annotations

from collections.abc import Iterable

from shared.errors import InvalidInputError
from shared.model import IndexEntry, Memory, Scope, iso_ms
from shared.revisions import Replacements, provably_seen
from shared.storage.interfaces import VectorStore


class Visibility:
    """The three rules of visibility for one request, at one instant."""

    __slots__ = ("conversation", "now_iso", "now_ms", "replacements")

    def __init__(self, conversation: str | None, *, now_ms: int, replacements: Replacements):
        self.conversation = conversation
        self.now_ms = now_ms
        self.now_iso = iso_ms(now_ms)
        self.replacements = replacements

    def sees(self, memory: Memory) -> bool:
        return (
            memory.visible_to(self.conversation)
            and not memory.expired(self.now_iso)
            and not self.replacements.retired(memory.id)
        )

    def sees_entry(self, entry: IndexEntry) -> bool:
        """The same rules from an index key alone (list and stats read no bodies)."""
        return (
            entry.visible_to(self.conversation)
            and not entry.expired(self.now_ms)
            and not self.replacements.retired(entry.memory_id)
        )


async def named_memory(
    vectors: VectorStore, tenant: str, memory_id: str, *, conversation: str | None, now_iso: str
) -> Memory | None:
    """The memory ``memory_id`` names, when a request in ``conversation`` may name it: its own
    conversation's or a project memory, not expired. A replaced version may be named too
    (forget and get reach it; its id stays in memory_history)."""
    found = await vectors.get(tenant, [memory_id])
    memory = next((m for m in found if m.id == memory_id), None)
    if memory is None or not memory.visible_to(conversation) or memory.expired(now_iso):
        return None
    return memory


def may_replace(replacement: Memory, replaced: Memory) -> bool:
    """A conversation note cannot stand in for a project memory: it retires it everywhere."""
    return not (replaced.scope == "project" and replacement.scope == "conversation")


async def replaceable(
    vectors: VectorStore, tenant: str, visibility: Visibility, memory_id: str, *, scope: Scope
) -> Memory:
    """The memory ``replaces`` names, if this request may replace it with a memory of ``scope``.

    A retired version may be replaced when no newer version of it is left to see (each was
    forgotten or has expired): the chain stays correctable whichever member is gone, and the
    newest version the request can still see is the one to correct.

    Raises:
        InvalidInputError: it names no memory this request may replace, and says why (and,
            for a version that is gone, which version to correct instead).
    """
    memory = await named_memory(
        vectors, tenant, memory_id, conversation=visibility.conversation, now_iso=visibility.now_iso
    )
    if memory is None:
        instead = await _correctable_instead(vectors, tenant, visibility, memory_id)
        hint = (
            f"; the newest version of that fact you can see is {instead}: pass "
            f"replaces={instead} to correct it"
            if instead is not None
            else "; recall or list_memories shows the ids you can replace"
        )
        raise InvalidInputError(
            "replaces",
            f"`replaces`: no memory {memory_id} is visible to this request (forgotten, "
            f"expired, or another conversation's note){hint}",
        )
    if visibility.replacements.retired(memory_id):
        newest = _newest_seen(await _seen_newer(vectors, tenant, visibility, memory_id))
        if newest:
            by = ", ".join(visibility.replacements.replaced_by(memory_id))
            raise InvalidInputError(
                "replaces",
                f"`replaces`: {memory_id} was already replaced by {by}; the current version is "
                f"{', '.join(newest)}: pass replaces={newest[-1]} to correct it",
            )
    if memory.scope == "project" and scope == "conversation":
        # A replacement retires its memory everywhere; a conversation note is seen in one.
        raise InvalidInputError(
            "replaces",
            '`replaces` names a project memory, and scope "conversation" would hide the '
            'correction from every other conversation; use scope "project"',
        )
    return memory


def _live(visibility: Visibility, memories: Iterable[Memory]) -> dict[str, set[str]]:
    """Those of ``memories`` this request can name (its own or a project memory, not
    expired), each with the versions newer than it."""
    return {
        m.id: visibility.replacements.newer(m.id)
        for m in memories
        if m.visible_to(visibility.conversation) and not m.expired(visibility.now_iso)
    }


async def _seen_newer(
    vectors: VectorStore, tenant: str, visibility: Visibility, memory_id: str
) -> dict[str, set[str]]:
    """The versions newer than ``memory_id`` that this request can still name."""
    newer = visibility.replacements.newer(memory_id)
    return _live(visibility, await vectors.get(tenant, sorted(newer)) if newer else [])


def _newest_seen(live: dict[str, set[str]]) -> tuple[str, ...]:
    """Of ``live``, those with no newer version in it: what a correction should name."""
    return tuple(sorted(v for v, newer in live.items() if not newer & live.keys()))


async def _correctable_instead(
    vectors: VectorStore, tenant: str, visibility: Visibility, memory_id: str
) -> str | None:
    """For a version this request cannot name: the newest version of its fact it may correct
    instead, when the request is proven to have seen the version (``versions_shown``: the id
    alone must not tell another conversation that its note existed); else None."""
    versions = visibility.replacements.versions(memory_id)
    if len(versions) < 2:
        return None
    bodies = {m.id: m for m in await vectors.get(tenant, list(versions))}
    if memory_id not in versions_shown(visibility.replacements, bodies, visibility.conversation):
        return None
    correctable = _newest_seen(_live(visibility, bodies.values()))
    return max(correctable) if correctable else None


def versions_shown(
    replacements: Replacements, bodies: dict[str, Memory], conversation: str | None
) -> frozenset[str]:
    """The versions of a chain memory_history may show a request in ``conversation``: those
    whose body it sees, and those without a body whose neighbours prove it could have seen
    them (``shared.revisions.forgotten``): an id alone would tell another conversation that a
    note of its existed."""
    seen = {version for version, m in bodies.items() if m.visible_to(conversation)}
    return frozenset(seen) | provably_seen(replacements, bodies, conversation)
