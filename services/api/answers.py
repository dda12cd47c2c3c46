"""What the memory operations answer: plain records the tool modules render."""

from __future__ import annotations

import msgspec

from shared.model import Memory
from shared.ranking import RecallMode, RecallOutcome


class RecallAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``visible`` is how many candidates this conversation may see at all (0: nothing stored)."""

    mode: RecallMode
    visible: int
    outcome: RecallOutcome | None


class RememberAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """``replaced``: the memory this one retired; ``supersedes``: the memory this one probably
    updates (linked: it stays current, ranked below this one); ``kept``: the memories whose
    links to this one were undone (``supersedes: false`` on a fact already known)."""

    memory: Memory
    already_known: bool
    replaced: Memory | None = None
    supersedes: Memory | None = None
    kept: tuple[str, ...] = ()


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


class BulkForgetAnswer(msgspec.Struct, frozen=True, kw_only=True):
    matched: int
    deleted: int

    @property
    def remaining(self) -> int:
        return self.matched - self.deleted


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool handler answers: the text a model reads, and the same facts as the tool's
    outputSchema declares them: a ``services.api.structured`` output, ``structuredContent``
    once converted."""

    text: str
    data: msgspec.Struct
