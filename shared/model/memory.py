"""The memory record: written once, never updated."""

from __future__ import annotations

from typing import Final

import msgspec

from shared.errors import InvariantError
from shared.model.draft import Draft, draft_values
from shared.model.ids import DAY_MS, canonical_iso, iso_ms, new_ulid

TRUST_MANUAL: Final = 1.0


class Memory(Draft, frozen=True, kw_only=True, gc=False):
    """One stored fact: the caller's fields (``Draft``: content, type, category, tags, scope)
    and what the system adds to them.

    Not tracked by the garbage collector: its fields are strings, a tuple of strings and a float,
    so it can never be part of a reference cycle, and the scan cache holds one per memory.

    Attributes:
        id: a ULID; its time part is when the memory was written.
        tenant: the tenant that owns it (the isolation boundary).
        conversation: the conversation it was written from: the visibility key of a
            conversation-scoped memory, provenance only for a project memory.
        created_at: ISO-8601 UTC with milliseconds (``2026-01-02T03:04:05.678Z``).
        trust_base: the starting trust; 1.0 for everything written through remember.
        expires_at: when it stops being true, or None: from then on it is invisible
            everywhere, and the compactor's expiry job deletes it. Always held in the form
            ``created_at`` has (``canonical_iso``): one given in any other ISO-8601 form (an
            offset, the basic format, a week date: what an old import stored) is converted
            when the memory is built, so every reader compares the same strings.
    """

    id: str
    tenant: str
    conversation: str | None = None
    created_at: str
    trust_base: float = TRUST_MANUAL
    expires_at: str | None = None

    def __post_init__(self) -> None:
        if self.expires_at is None:
            return
        canonical = canonical_iso(self.expires_at)
        if canonical is None:
            raise InvariantError(f"expires_at is not an ISO-8601 time: {self.expires_at!r}")
        if canonical != self.expires_at:
            msgspec.structs.force_setattr(self, "expires_at", canonical)

    def expired(self, now_iso: str) -> bool:
        """Whether it has expired by ``now_iso`` (an ``iso_ms`` stamp: equal-width ISO strings
        compare as the times they name, so no parse is needed on the hot path)."""
        return self.expires_at is not None and self.expires_at <= now_iso

    def expired_by(self, now_ms: int) -> bool:
        """``expired`` for a time in milliseconds (off the hot path)."""
        return self.expired(iso_ms(now_ms))

    def visible_to(self, conversation: str | None) -> bool:
        """Whether a request in ``conversation`` (or in none) may see this memory."""
        if self.scope != "conversation":
            return True
        return conversation is not None and conversation == self.conversation


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """A memory returned by a vector query with its cosine similarity (1 − cosine distance)."""

    memory: Memory
    similarity: float


def new_memory(
    tenant: str,
    conversation: str | None,
    draft: Draft,
    *,
    expires_in_days: int | None,
    now_ms: int,
) -> Memory:
    """A memory written now from ``draft``: its id and creation time from ``now_ms``, its expiry
    that many days later. The conversation is recorded whatever the scope: the visibility key
    of a note, provenance for a project memory."""
    expires_ms = now_ms + expires_in_days * DAY_MS if expires_in_days is not None else None
    return Memory(
        **draft_values(draft),
        id=new_ulid(now_ms),
        tenant=tenant,
        conversation=conversation,
        created_at=iso_ms(now_ms),
        expires_at=iso_ms(expires_ms) if expires_ms is not None else None,
    )
