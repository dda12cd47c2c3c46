"""forget: permanently delete one memory, or every memory a filter selects (counted first)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import ForgetFilter, Reply
from services.api.render import render_bulk_forget, render_forget
from services.api.service import BULK_FORGET_BATCH, MemoryService
from services.api.structured import FORGET_OUTPUT, bulk_forget_data, forget_data
from services.api.tools.arguments import (
    memory_id,
    optional,
    optional_bool,
    optional_choice,
    optional_int,
    utf8_bytes,
)
from services.api.tools.spec import ToolContext
from shared.errors import InvalidInputError
from shared.model import MEMORY_TYPES
from shared.storage.codec import MAX_CATEGORY_BYTES, MAX_TAG_BYTES

MAX_OLDER_THAN_DAYS: Final = 36_500
FILTER_FIELDS: Final = ("type", "category", "tag", "conversation_only", "older_than_days")

NAME: Final = "forget"
DESCRIPTION: Final = (
    "Permanently delete one memory that has become wrong (`id`), or every memory a `filter` "
    "selects. When a fact is merely out of date, prefer remembering the correction with "
    "`replaces`. Forgetting one version of a corrected fact deletes only that version: what it "
    "replaced stays retired and what replaced it stays current. A filter first only counts: "
    f"nothing is deleted without confirm: true, and then at most {BULK_FORGET_BATCH} per call "
    "(the answer says how many remain). A filter matches current and replaced versions alike, "
    "and never another conversation's notes."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "One memory id, as recall shows it."},
        "filter": {
            "type": "object",
            "description": "Instead of id: what to delete; every field given must hold.",
            "properties": {
                "type": {"type": "string", "enum": list(MEMORY_TYPES)},
                "category": {
                    "type": "string",
                    "description": f"Exact category (at most {MAX_CATEGORY_BYTES} bytes).",
                },
                "tag": {
                    "type": "string",
                    "description": f"Memories carrying this tag (at most {MAX_TAG_BYTES} bytes).",
                },
                "conversation_only": {
                    "type": "boolean",
                    "description": "Only this conversation's own notes (scope conversation).",
                },
                "older_than_days": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_OLDER_THAN_DAYS,
                    "description": "Only memories stored more than this many days ago.",
                },
            },
            "additionalProperties": False,
        },
        "confirm": {
            "type": "boolean",
            "description": "With filter: true deletes; without it the call only counts.",
        },
    },
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = FORGET_OUTPUT


def _text(value: Any, field: str, *, max_bytes: int) -> str | None:
    """A filter's category or tag, held to the limit ``remember`` stores it under: a longer
    one can match nothing, and is a mistake worth naming rather than a silent "0 match"."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(field, f"`{field}` must be a non-empty string")
    if utf8_bytes(value) > max_bytes:
        raise InvalidInputError(field, f"`{field}` may be at most {max_bytes} bytes")
    return value.strip()


def forget_filter(arguments: Mapping[str, Any]) -> ForgetFilter:
    value = optional(arguments, "filter")
    if not isinstance(value, dict):
        raise InvalidInputError("filter", "`filter` must be an object")
    unknown = [name for name in value if name not in FILTER_FIELDS]
    if unknown:
        raise InvalidInputError(
            "filter",
            f"unknown field `filter.{unknown[0]}`; a filter takes: {', '.join(FILTER_FIELDS)}",
        )
    # Each field is refused by its full name (``filter.type``), not as a top-level argument.
    named = {f"filter.{name}": field for name, field in value.items()}
    match = ForgetFilter(
        memory_type=optional_choice(named, "filter.type", MEMORY_TYPES, default=None),
        category=_text(
            named.get("filter.category"), "filter.category", max_bytes=MAX_CATEGORY_BYTES
        ),
        tag=_text(named.get("filter.tag"), "filter.tag", max_bytes=MAX_TAG_BYTES),
        conversation_only=optional_bool(named, "filter.conversation_only"),
        older_than_days=optional_int(
            named, "filter.older_than_days", low=1, high=MAX_OLDER_THAN_DAYS
        ),
    )
    if match == ForgetFilter():
        raise InvalidInputError(
            "filter",
            "`filter` is empty: name at least one of "
            f"{', '.join(FILTER_FIELDS)} (forget never deletes everything at once)",
        )
    return match


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    has_id = optional(arguments, "id") is not None
    has_filter = optional(arguments, "filter") is not None
    if has_id == has_filter:
        raise InvalidInputError(
            "id", "give either `id` (one memory) or `filter` (many), not both and not neither"
        )
    confirm = optional_bool(arguments, "confirm")
    if has_id:
        if optional(arguments, "confirm") is not None:
            raise InvalidInputError("confirm", "`confirm` goes with `filter`; `id` deletes at once")
        target = memory_id(arguments, "id")
        deleted = await service.forget(ctx.tenant, ctx.conversation, memory_id=target)
        return Reply(text=render_forget(target, deleted=deleted), data=forget_data(deleted=deleted))
    match = forget_filter(arguments)
    if match.conversation_only and ctx.conversation is None:
        raise InvalidInputError(
            "filter.conversation_only",
            f"`filter.conversation_only` needs {ctx.conversation_via}",
        )
    answer = await service.forget_matching(
        ctx.tenant, ctx.conversation, match=match, confirm=confirm
    )
    return Reply(
        text=render_bulk_forget(answer, confirm=confirm),
        data=bulk_forget_data(answer, confirm=confirm),
    )
