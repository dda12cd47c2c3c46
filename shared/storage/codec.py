"""The metadata codec every vector backend shares, and the byte budget it enforces.

The layout is what S3 Vectors holds, and the PostgreSQL backend stores exactly the same JSON,
so the two backends stay interchangeable::

    filterable:     tenantId, memoryType, category (when set),
                    scope (only "conversation"), conversation (when set),
                    expiresAt (when set)
    non-filterable: content, createdAt, tags (when non-empty), trustBase

The caller's fields (``shared.model.Draft``) are written and read from their declaration: each
under its name in camelCase, left out when it holds nothing, read back tolerantly by its shape.
A new one is filterable (the non-filterable keys are fixed when an index is made).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any, Final

import msgspec

from shared.errors import BudgetError
from shared.model import DRAFT_FIELDS, MAX_CONTENT_BYTES, DraftField, Memory
from shared.model.ids import canonical_iso, parse_iso_ms

MAX_FILTERABLE_BYTES: Final = 2_000
MAX_METADATA_BYTES: Final = 40_000
NON_FILTERABLE_KEYS: Final = ("content", "createdAt", "tags", "trustBase")
EPOCH_ISO: Final = "1970-01-01T00:00:00.000Z"
# Stored even as its default: list_memories filters on it, and a filter matches stored keys only.
_ALWAYS_STORED: Final = frozenset({"memory_type"})


def metadata_key(field: DraftField) -> str:
    """A draft field's key in the metadata: its attribute name in camelCase."""
    first, *rest = field.name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _stored_when(field: DraftField) -> Callable[[object], bool]:
    """Whether a value of ``field`` is written: always for a field without a default (the
    content), else not when it holds nothing (None, "", () or the default), which reads back as
    the default anyway."""
    if field.name in _ALWAYS_STORED or field.default is msgspec.NODEFAULT:
        return lambda value: True
    nothing = (None, "", (), field.default)
    return lambda value: value not in nothing


def _converted(field: DraftField) -> Callable[[object], object]:
    """How a stored value of a field of no shape the codec knows is taken back: as its type
    says, or as its default when it cannot be."""

    def read(value: object) -> object:
        try:
            return msgspec.convert(value, field.annotation)
        except msgspec.ValidationError:
            return field.default

    return read


def _writing(fields: Iterable[DraftField]) -> tuple[tuple[str, str, Callable[[object], bool]], ...]:
    return tuple((field.name, metadata_key(field), _stored_when(field)) for field in fields)


_FILTERABLE: Final = _writing(f for f in DRAFT_FIELDS if metadata_key(f) not in NON_FILTERABLE_KEYS)
_NON_FILTERABLE: Final = _writing(f for f in DRAFT_FIELDS if metadata_key(f) in NON_FILTERABLE_KEYS)
# Read back, as plain tuples (a decode is on recall's path): each field but the content, which
# a memory cannot be without and is read by hand.
_READ: Final = tuple(
    (field.name, metadata_key(field), field.shape, field.choices, _converted(field))
    for field in DRAFT_FIELDS
    if field.name != "content"
)


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


def _put(
    metadata: dict[str, Any],
    memory: Memory,
    fields: tuple[tuple[str, str, Callable[[object], bool]], ...],
) -> None:
    for name, key, stored in fields:
        value = getattr(memory, name)
        if stored(value):
            # A list, as JSON has no tuple (an empty one holds nothing: S3 Vectors refuses it).
            metadata[key] = list(value) if isinstance(value, tuple) else value


def to_metadata(memory: Memory) -> dict[str, Any]:
    """The metadata a memory is stored with (empty optional values are omitted)."""
    metadata: dict[str, Any] = {"tenantId": memory.tenant}
    _put(metadata, memory, _FILTERABLE)
    if memory.conversation:
        metadata["conversation"] = memory.conversation
    if memory.expires_at is not None:
        # Filterable on purpose: an index made by 0.9 cannot declare a new non-filterable key,
        # and 24 bytes fit the 2 KB budget (see docs/s3.md).
        metadata["expiresAt"] = memory.expires_at
    _put(metadata, memory, _NON_FILTERABLE)
    metadata["createdAt"] = memory.created_at
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
    created_at = metadata.get("createdAt")
    if not isinstance(created_at, str) or parse_iso_ms(created_at) is None:
        created_at = EPOCH_ISO
    conversation = metadata.get("conversation")
    # Read through the one parser into the one form (``canonical_iso``): an import once stored
    # the value as written (an offset, the basic format), which only a parse compares rightly.
    stored_expiry = metadata.get("expiresAt")
    expires_at = canonical_iso(stored_expiry) if isinstance(stored_expiry, str) else None
    trust = metadata.get("trustBase")
    trust_base = 1.0
    if isinstance(trust, int | float) and not isinstance(trust, bool) and math.isfinite(trust):
        # Within [0, 1], as remember writes it: beyond, the tie-break it scales would outweigh
        # relevance.
        trust_base = min(1.0, max(0.0, float(trust)))
    fields: dict[str, Any] = {
        "id": memory_id,
        "tenant": tenant,
        "content": content,
        "conversation": conversation if isinstance(conversation, str) and conversation else None,
        "created_at": created_at,
        "trust_base": trust_base,
        "expires_at": expires_at,
    }
    _read_draft(metadata, fields)
    return Memory(**fields)


def _read_draft(metadata: dict[str, Any], fields: dict[str, Any]) -> None:
    """The caller's fields but the content, each read as its shape says; one missing, or not of
    its shape (old or damaged metadata), is left to the field's default."""
    for name, key, shape, choices, convert in _READ:
        value = metadata.get(key)
        if value is None:
            continue
        if shape == "choice":
            # A tuple, not a set: damaged metadata may hold an unhashable value here.
            if value in choices:
                fields[name] = value
        elif shape == "optional text" or shape == "text":
            if isinstance(value, str) and value:
                fields[name] = value
        elif shape == "texts":
            if isinstance(value, list):
                fields[name] = tuple([entry for entry in value if isinstance(entry, str)])
        else:
            fields[name] = convert(value)
