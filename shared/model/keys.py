"""Key layouts of the state store (ordinary S3, or the PostgreSQL ``objects`` table).

::

    index/<tenant>/<invertedTime>#<ulid>#<type>[#<conversationDigest>]   empty; newest first
    index/<tenant>/<invertedTime>#<ulid>#<type>#[<digest>]#<expiresMs>    the same, expiring
    expiry/<expiresMs>#<tenant>#<ulid>                                    empty; soonest first
    replaced/<tenant>/<oldUlid>#<newUlid>                                 empty; one replacement
    replaced/<tenant>/<oldUlid>#<newUlid>#supersedes                      empty; a probable update
    replaced/<tenant>/<oldUlid>#<newUlid>#kept                            empty; that link undone
    stats/<tenant>/shard/<ulid>-<processId>.json                          one flush of deltas
    stats/<tenant>/merged.json                                            folded counts + watermark
    lexicon/<tenant>/shard/…, lexicon/<tenant>/merged.json                the same (shard log)
    forgetting/<tenant>/<ulid>.json                                       a forget in progress

Expiry and replacement are events recorded beside the memory, never in it: the expiry time is
fixed when the memory is written, so it rides on the memory's own keys (the index key, which
list and stats read without bodies, and an ``expiry/`` key in time order across tenants, so the
compactor finds what is due with one listing that stops at the first future key). A
replacement is one create-only key whose name is the whole record, so a listing of a tenant's
``replaced/`` prefix reads every chain without a body. A probable update (remember found the new
memory restating an older one with another value) is a record beside them with a suffix, and so
is the caller's word that both stay current: the same listing reads all three, and a reader that
knows only replacements skips the suffixed names.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from shared.errors import InvariantError
from shared.model.draft import MEMORY_TYPES, MemoryType
from shared.model.ids import conversation_digest, inverted_time, parse_iso_ms, ulid_time_ms
from shared.model.memory import Memory

INDEX_ROOT: Final = "index/"
STATS_ROOT: Final = "stats/"
EXPIRY_ROOT: Final = "expiry/"
REPLACED_ROOT: Final = "replaced/"
# Milliseconds as 13 digits (until the year 2286), so byte order is time order.
_EXPIRY_DIGITS: Final = 13
# The latest expiry a key can hold in that order (2286-11-20T17:46:39.999Z).
MAX_EXPIRY_MS: Final = 10**_EXPIRY_DIGITS - 1


class IndexEntry(msgspec.Struct, frozen=True, kw_only=True):
    """What one recency-index key says: the key is the whole record."""

    key: str
    memory_id: str
    memory_type: MemoryType
    conversation_digest: str | None = None
    expires_ms: int | None = None

    def expired(self, now_ms: int) -> bool:
        return self.expires_ms is not None and self.expires_ms <= now_ms

    def visible_to(self, conversation: str | None) -> bool:
        """Key-level visibility: no digest, or the digest of the asking conversation."""
        if self.conversation_digest is None:
            return True
        return conversation is not None and conversation_digest(conversation) == (
            self.conversation_digest
        )


def _is_digits(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` also accepts "²", which ``int`` refuses."""
    return text.isascii() and text.isdigit()


def index_prefix(tenant: str) -> str:
    return f"{INDEX_ROOT}{tenant}/"


def index_key(memory: Memory) -> str:
    """The recency-index key of a memory; the digest only on a conversation-scoped one."""
    created_ms = ulid_time_ms(memory.id)
    if created_ms is None:
        raise InvariantError(f"not a ULID: {memory.id!r}")
    stamp = inverted_time(created_ms)
    key = f"{index_prefix(memory.tenant)}{stamp}#{memory.id}#{memory.memory_type}"
    digest = (
        conversation_digest(memory.conversation)
        if memory.scope == "conversation" and memory.conversation is not None
        else ""
    )
    expires_ms = expiry_ms(memory)
    if expires_ms is not None:
        # The digest's place is kept (empty when there is none), so the parts stay positional.
        return f"{key}#{digest}#{expires_ms}"
    return f"{key}#{digest}" if digest else key


def expiry_ms(memory: Memory) -> int | None:
    """The memory's expiry in milliseconds, or None when it never expires (or the stamp is
    unreadable, which only damaged metadata can hold). Kept within what a key can hold in time
    order (0 to ``MAX_EXPIRY_MS``): an expiry before 1970, which an old import stored, is
    expired all the same, and a key with a minus sign would be unreadable to list and export."""
    if memory.expires_at is None:
        return None
    parsed = parse_iso_ms(memory.expires_at)
    return None if parsed is None else min(max(parsed, 0), MAX_EXPIRY_MS)


def parse_index_key(key: str) -> IndexEntry | None:
    """The entry a key encodes, or None for anything that is not a well-formed index key."""
    parts = key.rsplit("/", 1)[-1].split("#")
    if len(parts) not in (3, 4, 5):
        return None
    memory_id, memory_type = parts[1], parts[2]
    if not memory_id or memory_type not in MEMORY_TYPES:
        return None
    digest = parts[3] if len(parts) >= 4 and parts[3] else None
    expires_ms = None
    if len(parts) == 5:
        if not _is_digits(parts[4]):
            return None
        expires_ms = int(parts[4])
    return IndexEntry(
        key=key,
        memory_id=memory_id,
        memory_type=memory_type,
        conversation_digest=digest,
        expires_ms=expires_ms,
    )


class ExpiryEntry(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    tenant: str
    memory_id: str
    expires_ms: int


def expiry_key(tenant: str, memory_id: str, expires_ms: int) -> str:
    return f"{EXPIRY_ROOT}{expires_ms:0{_EXPIRY_DIGITS}d}#{tenant}#{memory_id}"


def expiry_key_of(memory: Memory) -> str | None:
    expires_ms = expiry_ms(memory)
    return None if expires_ms is None else expiry_key(memory.tenant, memory.id, expires_ms)


def parse_expiry_key(key: str) -> ExpiryEntry | None:
    if not key.startswith(EXPIRY_ROOT):
        return None
    parts = key[len(EXPIRY_ROOT) :].split("#")
    if len(parts) != 3 or not _is_digits(parts[0]) or not parts[1] or not parts[2]:
        return None
    return ExpiryEntry(key=key, tenant=parts[1], memory_id=parts[2], expires_ms=int(parts[0]))


def replaced_prefix(tenant: str, old_id: str | None = None) -> str:
    """All of a tenant's replacement records, or those of one replaced memory."""
    return f"{REPLACED_ROOT}{tenant}/" + (f"{old_id}#" if old_id is not None else "")


def replaced_key(tenant: str, old_id: str, new_id: str) -> str:
    return f"{replaced_prefix(tenant)}{old_id}#{new_id}"


RevisionKind = Literal["replaces", "supersedes", "kept"]
_SUFFIXED: Final[tuple[RevisionKind, ...]] = ("supersedes", "kept")


def link_key(tenant: str, old_id: str, new_id: str, kind: RevisionKind) -> str:
    """The record of one revision: a replacement, a probable update, or that update undone."""
    key = replaced_key(tenant, old_id, new_id)
    return key if kind == "replaces" else f"{key}#{kind}"


def parse_revision_key(key: str) -> tuple[str, str, RevisionKind] | None:
    """(old id, new id, kind) of a ``replaced/`` record, or None for any other key."""
    parts = key.rsplit("/", 1)[-1].split("#")
    if len(parts) == 2:
        kind: RevisionKind = "replaces"
    elif len(parts) == 3 and parts[2] in _SUFFIXED:
        kind = "supersedes" if parts[2] == "supersedes" else "kept"
    else:
        return None
    old_id, new_id = parts[0], parts[1]
    if not old_id or not new_id:
        return None
    return old_id, new_id, kind
