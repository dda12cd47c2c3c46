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
    """``replaced``: the memory this one retired; ``may_update``: a visible memory this one
    looks like a revision of (a hint only: nothing was retired)."""

    memory: Memory
    already_known: bool
    replaced: Memory | None = None
    may_update: Memory | None = None


class Version(msgspec.Struct, frozen=True, kw_only=True):
    """One version in a chain: its body (None once forgotten) and what replaced it."""

    memory_id: str
    memory: Memory | None
    replaced_by: tuple[str, ...]
    expired: bool


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
