"""What one request may see: its conversation's notes and everyone's project memories, minus
what has expired and what a replacement retired."""

from __future__ import annotations

from shared.model import IndexEntry, Memory, iso_ms
from shared.revisions.chain import Replacements


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


__all__ = ["Visibility"]
