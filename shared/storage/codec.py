"""The metadata codec every vector backend shares, and the byte budget it enforces.

The layout is what S3 Vectors holds, and the PostgreSQL backend stores exactly the same JSON,
so the two backends stay interchangeable::

    filterable:     tenantId, memoryType, category (when set),
                    scope (only "conversation"), conversation (when set),
                    expiresAt (when set)
    non-filterable: content, createdAt, tags (when non-empty), trustBase
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from shared.errors import BudgetError
from shared.model import MEMORY_TYPES, Memory
from shared.model.ids import canonical_iso, parse_iso_ms

MAX_CONTENT_BYTES: Final = 32_000
# What one memory may carry beside its content: remember refuses more, and so does an import.
MAX_CATEGORY_BYTES: Final = 128
MAX_TAGS: Final = 20
MAX_TAG_BYTES: Final = 64
MAX_FILTERABLE_BYTES: Final = 2_000
MAX_METADATA_BYTES: Final = 40_000
NON_FILTERABLE_KEYS: Final = ("content", "createdAt", "tags", "trustBase")
EPOCH_ISO: Final = "1970-01-01T00:00:00.000Z"


def vector_key(tenant: str, memory_id: str) -> str:
    return f"{tenant}#{memory_id}"


def parse_vector_key(key: str) -> tuple[str, str] | None:
    """(tenant, memory id) of a ``vector_key``; None for a key of any other shape. Tenants
    never hold ``#`` (their header's rule), and ids are ULIDs, so the split is unambiguous."""
    tenant, sep, memory_id = key.rpartition("#")
    return (tenant, memory_id) if sep and tenant and memory_id else None


def _compact_json_bytes(value: object) -> int:
    # The byte count AWS applies: compact JSON, non-ASCII left as UTF-8.
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def to_metadata(memory: Memory) -> dict[str, Any]:
    """The metadata a memory is stored with (empty optional values are omitted)."""
    metadata: dict[str, Any] = {"tenantId": memory.tenant, "memoryType": memory.memory_type}
    if memory.category:
        metadata["category"] = memory.category
    if memory.scope == "conversation":
        metadata["scope"] = "conversation"
    if memory.conversation:
        metadata["conversation"] = memory.conversation
    if memory.expires_at is not None:
        # Filterable on purpose: an index made by 0.9 cannot declare a new non-filterable key,
        # and 24 bytes fit the 2 KB budget (see docs/s3.md).
        metadata["expiresAt"] = memory.expires_at
    metadata["content"] = memory.content
    metadata["createdAt"] = memory.created_at
    if memory.tags:  # S3 Vectors rejects an empty array
        metadata["tags"] = list(memory.tags)
    metadata["trustBase"] = memory.trust_base
    return metadata


def check_budget(metadata: dict[str, Any]) -> None:
    """Refuse, naming the field to shorten, anything S3 Vectors would refuse for size."""
    content_bytes = len(str(metadata.get("content", "")).encode())
    if content_bytes > MAX_CONTENT_BYTES:
        raise BudgetError(
            f"content is {content_bytes} bytes; the limit is {MAX_CONTENT_BYTES} bytes — "
            "store the essential fact"
        )
    filterable = {k: v for k, v in metadata.items() if k not in NON_FILTERABLE_KEYS}
    if _compact_json_bytes(filterable) > MAX_FILTERABLE_BYTES:
        raise BudgetError(
            f"filterable metadata is over {MAX_FILTERABLE_BYTES} bytes — shorten the category"
        )
    if _compact_json_bytes(metadata) > MAX_METADATA_BYTES:
        raise BudgetError(
            f"metadata is over {MAX_METADATA_BYTES} bytes — shorten the tags or store a "
            "shorter fact"
        )


def checked_metadata(memory: Memory) -> dict[str, Any]:
    """What a backend stores with ``memory``, refused (``check_budget``) before it is sent."""
    metadata = to_metadata(memory)
    check_budget(metadata)
    return metadata


def from_metadata(key_or_id: str, metadata: dict[str, Any]) -> Memory | None:
    """Rebuild a memory, tolerating old or damaged metadata; None when it cannot be one."""
    content, tenant = metadata.get("content"), metadata.get("tenantId")
    if not isinstance(content, str) or not isinstance(tenant, str):
        return None
    memory_id = key_or_id.split("#", 1)[1] if "#" in key_or_id else key_or_id
    memory_type = metadata.get("memoryType")
    created_at = metadata.get("createdAt")
    if not isinstance(created_at, str) or parse_iso_ms(created_at) is None:
        created_at = EPOCH_ISO
    category = metadata.get("category")
    tags = metadata.get("tags")
    conversation = metadata.get("conversation")
    # Read through the one parser into the one form (``canonical_iso``): an import once stored
    # the value as written (an offset, the basic format), which only a parse compares rightly.
    stored_expiry = metadata.get("expiresAt")
    expires_at = canonical_iso(stored_expiry) if isinstance(stored_expiry, str) else None
    trust = metadata.get("trustBase")
    trust_base = 1.0
    if isinstance(trust, int | float) and not isinstance(trust, bool) and math.isfinite(trust):
        trust_base = float(trust)
    return Memory(
        id=memory_id,
        tenant=tenant,
        content=content,
        memory_type=memory_type if memory_type in MEMORY_TYPES else "project",
        category=category if isinstance(category, str) and category else None,
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        scope="conversation" if metadata.get("scope") == "conversation" else "project",
        conversation=conversation if isinstance(conversation, str) and conversation else None,
        created_at=created_at,
        trust_base=trust_base,
        expires_at=expires_at,
    )
