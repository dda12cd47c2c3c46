"""What each tool returns as ``structuredContent`` beside its text, and the ``outputSchema`` that
declares it: ids, dates, expiry, confidence and what was shown, so a client that parses JSON
never scrapes the prose. The text stays what a model reads first; this carries the same facts.

Every schema is plain JSON Schema (draft 2020-12, what MCP clients validate with). Fields that
may be absent are nullable rather than optional, so a record always has the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from services.api.answers import BulkForgetAnswer, RememberAnswer, Version
from shared.memories.listing import StatsAnswer
from shared.model import MEMORY_TYPES, SCOPES, Memory

CONFIDENCES: Final = ("high", "medium", "low")

_NULLABLE_TEXT: Final = {"type": ["string", "null"]}

MEMORY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string", "enum": list(MEMORY_TYPES)},
        "category": _NULLABLE_TEXT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "scope": {"type": "string", "enum": list(SCOPES)},
        "created_at": {"type": "string"},
        "expires_at": _NULLABLE_TEXT,
        "length": {"type": "integer", "minimum": 0, "description": "characters of the text"},
    },
    "required": ["id", "type", "category", "tags", "scope", "created_at", "expires_at", "length"],
}


def memory_record(memory: Memory) -> dict[str, Any]:
    """A memory's facts without its text (the text, or part of it, travels beside)."""
    return {
        "id": memory.id,
        "type": memory.memory_type,
        "category": memory.category,
        "tags": list(memory.tags),
        "scope": memory.scope,
        "created_at": memory.created_at,
        "expires_at": memory.expires_at,
        "length": len(memory.content),
    }


def _with(base: dict[str, Any], **fields: dict[str, Any]) -> dict[str, Any]:
    """``base`` (an object schema) with more required properties."""
    return {
        "type": "object",
        "properties": {**base["properties"], **fields},
        "required": [*base["required"], *fields],
    }


def _object(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": fields, "required": list(fields)}


RECALL_OUTPUT: Final = _object(
    mode={"type": "string"},
    confidence={"type": "string", "enum": [*CONFIDENCES, "none"]},
    compared={
        "type": "integer",
        "description": "memories this request may see that either leg brought up",
    },
    results={
        "type": "array",
        "items": _with(
            MEMORY_SCHEMA,
            confidence={"type": "string", "enum": list(CONFIDENCES)},
            standing={"type": "integer", "description": "percent of the top result's score"},
            matched={"type": "array", "items": {"type": "string"}},
            text={"type": "string", "description": "the memory, or the excerpt shown of it"},
            excerpt={
                "type": ["object", "null"],
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                "description": "characters [start, end) shown, or null when shown whole",
            },
        ),
    },
    left_out={"type": "integer", "description": "results left out to fit max_tokens"},
    left_out_chars={"type": "integer"},
    max_tokens={"type": "integer"},
)

REMEMBER_OUTPUT: Final = _with(
    MEMORY_SCHEMA,
    stored={"type": "boolean", "description": "false: an existing memory already said it"},
    preview={"type": "string"},
    replaced=_NULLABLE_TEXT,
    may_update=_NULLABLE_TEXT,
)

LIST_OUTPUT: Final = _object(
    memories={"type": "array", "items": _with(MEMORY_SCHEMA, preview={"type": "string"})}
)

FORGET_OUTPUT: Final = _object(
    deleted={"type": "integer"},
    matched={"type": "integer", "description": "memories the id or filter selects"},
    remaining={"type": "integer"},
    confirmed={"type": "boolean"},
)

STATS_OUTPUT: Final = _object(
    total={"type": "integer"},
    by_type={"type": "object", "additionalProperties": {"type": "integer"}},
    lower_bound={"type": "boolean"},
)

VERSION_SCHEMA: Final = _object(
    id={"type": "string"},
    status={"type": "string", "enum": ["current", "replaced", "expired", "forgotten"]},
    replaced_by={"type": "array", "items": {"type": "string"}},
    memory={"anyOf": [MEMORY_SCHEMA, {"type": "null"}]},
)

HISTORY_OUTPUT: Final = _object(
    id={"type": "string"},
    found={"type": "boolean"},
    versions={"type": "array", "items": VERSION_SCHEMA},
)

GET_OUTPUT: Final = _object(
    id={"type": "string"},
    found={"type": "boolean"},
    memory={"anyOf": [MEMORY_SCHEMA, {"type": "null"}]},
    text=_NULLABLE_TEXT,
    replaced_by={"type": "array", "items": {"type": "string"}},
)

DOCS_OUTPUT: Final = _object(
    excerpts={
        "type": "array",
        "items": _object(
            text={"type": "string"},
            source=_NULLABLE_TEXT,
            standing={"type": ["integer", "null"]},
            truncated={"type": "boolean"},
        ),
    }
)


def version_record(version: Version) -> dict[str, Any]:
    memory = version.memory
    if memory is None:
        status = "forgotten"
    elif version.expired:
        status = "expired"
    elif version.replaced_by:
        status = "replaced"
    else:
        status = "current"
    return {
        "id": version.memory_id,
        "status": status,
        "replaced_by": list(version.replaced_by),
        "memory": memory_record(memory) if memory is not None else None,
    }


def remember_data(answer: RememberAnswer, *, preview: str) -> dict[str, Any]:
    return {
        **memory_record(answer.memory),
        "stored": not answer.already_known,
        "preview": preview,
        "replaced": answer.replaced.id if answer.replaced is not None else None,
        "may_update": answer.may_update.id if answer.may_update is not None else None,
    }


def stats_data(answer: StatsAnswer) -> dict[str, Any]:
    return {"total": answer.total, "by_type": dict(answer.by_type), "lower_bound": answer.capped}


def bulk_forget_data(answer: BulkForgetAnswer, *, confirm: bool) -> dict[str, Any]:
    return {
        "deleted": answer.deleted,
        "matched": answer.matched,
        "remaining": answer.remaining,
        "confirmed": confirm,
    }


def forget_data(*, deleted: bool) -> dict[str, Any]:
    found = int(deleted)
    return {"deleted": found, "matched": found, "remaining": 0, "confirmed": True}


def history_data(memory_id: str, versions: Sequence[Version] | None) -> dict[str, Any]:
    return {
        "id": memory_id,
        "found": versions is not None,
        "versions": [version_record(v) for v in versions or ()],
    }


def get_data(memory_id: str, version: Version | None) -> dict[str, Any]:
    memory = version.memory if version is not None else None
    return {
        "id": memory_id,
        "found": memory is not None,
        "memory": memory_record(memory) if memory is not None else None,
        "text": memory.content if memory is not None else None,
        "replaced_by": list(version.replaced_by) if version is not None else [],
    }


__all__ = [
    "DOCS_OUTPUT",
    "FORGET_OUTPUT",
    "GET_OUTPUT",
    "HISTORY_OUTPUT",
    "LIST_OUTPUT",
    "MEMORY_SCHEMA",
    "RECALL_OUTPUT",
    "REMEMBER_OUTPUT",
    "STATS_OUTPUT",
    "VERSION_SCHEMA",
    "bulk_forget_data",
    "forget_data",
    "get_data",
    "history_data",
    "memory_record",
    "remember_data",
    "stats_data",
    "version_record",
]
