"""Key layouts of the state store (ordinary S3, or the PostgreSQL ``objects`` table).

::

    index/<tenant>/<invertedTime>#<ulid>#<type>[#<conversationDigest>]   empty; newest first
    stats/<tenant>/shard/<ulid>-<processId>.json                          one flush of deltas
    stats/<tenant>/merged.json                                            folded counts + watermark
"""

from __future__ import annotations

from typing import Final

import msgspec

from shared.model.ids import conversation_digest, inverted_time, ulid_time_ms
from shared.model.memory import MEMORY_TYPES, Memory, MemoryType

INDEX_ROOT: Final = "index/"
STATS_ROOT: Final = "stats/"


class IndexEntry(msgspec.Struct, frozen=True, kw_only=True):
    """What one recency-index key says: the key is the whole record."""

    key: str
    memory_id: str
    memory_type: MemoryType
    conversation_digest: str | None = None

    def visible_to(self, conversation: str | None) -> bool:
        """Key-level visibility: no digest, or the digest of the asking conversation."""
        if self.conversation_digest is None:
            return True
        return conversation is not None and conversation_digest(conversation) == (
            self.conversation_digest
        )


def index_prefix(tenant: str) -> str:
    return f"{INDEX_ROOT}{tenant}/"


def index_key(memory: Memory) -> str:
    """The recency-index key of a memory; the digest only on a conversation-scoped one."""
    created_ms = ulid_time_ms(memory.id)
    if created_ms is None:
        raise ValueError(f"not a ULID: {memory.id!r}")
    stamp = inverted_time(created_ms)
    key = f"{index_prefix(memory.tenant)}{stamp}#{memory.id}#{memory.memory_type}"
    if memory.scope == "conversation" and memory.conversation is not None:
        key += f"#{conversation_digest(memory.conversation)}"
    return key


def parse_index_key(key: str) -> IndexEntry | None:
    """The entry a key encodes, or None for anything that is not a well-formed index key."""
    parts = key.rsplit("/", 1)[-1].split("#")
    if len(parts) not in (3, 4):
        return None
    memory_id, memory_type = parts[1], parts[2]
    if not memory_id or memory_type not in MEMORY_TYPES:
        return None
    digest = parts[3] if len(parts) == 4 and parts[3] else None
    return IndexEntry(
        key=key,
        memory_id=memory_id,
        memory_type=memory_type,
        conversation_digest=digest,
    )


def stats_prefix(tenant: str) -> str:
    return f"{STATS_ROOT}{tenant}/"


def shard_prefix(tenant: str) -> str:
    return f"{stats_prefix(tenant)}shard/"


def shard_key(tenant: str, shard_name: str) -> str:
    return f"{shard_prefix(tenant)}{shard_name}"


def shard_name(ulid: str, process_id: str) -> str:
    """``<ulid>-<processId>.json``: unique per process, ordered by the stamp's time."""
    return f"{ulid}-{process_id}.json"


def shard_time_ms(name: str) -> int | None:
    """The ULID time a shard's file name was stamped with, or None when it does not parse."""
    return ulid_time_ms(name[:26])


def merged_key(tenant: str) -> str:
    return f"{stats_prefix(tenant)}merged.json"
