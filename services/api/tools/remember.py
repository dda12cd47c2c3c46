"""remember: store a durable fact, unless an existing memory already says it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import preview, render_remembered
from services.api.service import MemoryService
from services.api.structured import REMEMBER_OUTPUT, remember_data
from services.api.tools.arguments import (
    memory_id,
    optional,
    optional_choice,
    optional_int,
    required_text,
    utf8_bytes,
)
from services.api.tools.spec import ToolContext
from shared.errors import InvalidInputError
from shared.model import MEMORY_TYPES, SCOPES
from shared.storage.codec import MAX_CATEGORY_BYTES, MAX_CONTENT_BYTES, MAX_TAG_BYTES, MAX_TAGS

MIN_EXPIRY_DAYS: Final = 1
MAX_EXPIRY_DAYS: Final = 3650

NAME: Final = "remember"
DESCRIPTION: Final = (
    "Store a durable fact for later runs: a decision and its reason, a convention, a command "
    "that worked, something the user asked to be kept. Write it so it makes sense months from "
    "now without this conversation. A near-identical fact is not written twice: you are told "
    "which memory already says it (the tags, category and expiry you passed are then "
    'discarded). scope "conversation" keeps a note for this conversation only. When a fact '
    "has changed (a new port, version or choice), pass the old memory's id as `replaces`: the "
    "old one is retired from recall, lists and counts, and stays readable in memory_history. "
    "If you are told a new fact may update an existing memory, check and remember it again "
    "with replaces. `expires_in_days` makes a temporary fact disappear on its own."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "content": {
            "type": "string",
            "description": "The fact, self-contained, at most 32,000 bytes.",
        },
        "type": {
            "type": "string",
            "enum": list(MEMORY_TYPES),
            "description": (
                "project (default): how the project is built or decided. pattern: a reusable "
                "snippet or command. reference: an external fact or link. conversation: "
                "something the user said that should persist."
            ),
        },
        "category": {
            "type": "string",
            "description": "Optional sub-label such as decision, architecture, convention; "
            "at most 128 bytes.",
        },
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Optional labels: at most 20, each at most 64 bytes.",
        },
        "replaces": {
            "type": "string",
            "description": (
                "Optional id of the memory this fact corrects (from recall or list_memories); "
                "that memory is retired. The fact is stored even when it resembles another."
            ),
        },
        "expires_in_days": {
            "type": "integer",
            "minimum": MIN_EXPIRY_DAYS,
            "maximum": MAX_EXPIRY_DAYS,
            "description": "Optional: forget this fact on its own after 1-3650 days.",
        },
        "scope": {
            "type": "string",
            "enum": list(SCOPES),
            "description": (
                "project (default): shared by every conversation of the project. conversation: "
                "for this conversation only; needs the request to be in a conversation."
            ),
        },
    },
    "required": ["content"],
    "additionalProperties": False,
}


def _content(arguments: Mapping[str, Any]) -> str:
    content = required_text(arguments, "content")
    size = utf8_bytes(content)
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError(
            "content",
            f"`content` is {size} bytes; it may be at most {MAX_CONTENT_BYTES} bytes — store "
            "the essential fact",
        )
    return content


def _category(arguments: Mapping[str, Any]) -> str | None:
    value = optional(arguments, "category")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError("category", "`category` must be a string")
    if utf8_bytes(value) > MAX_CATEGORY_BYTES:
        raise InvalidInputError("category", f"`category` may be at most {MAX_CATEGORY_BYTES} bytes")
    return value.strip() or None


def _tags(arguments: Mapping[str, Any]) -> list[str]:
    value = optional(arguments, "tags")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        raise InvalidInputError("tags", "`tags` must be an array of strings")
    tags = [tag.strip() for tag in value if tag.strip()]
    if len(tags) > MAX_TAGS:
        raise InvalidInputError("tags", f"`tags` may hold at most {MAX_TAGS} entries")
    for tag in tags:
        if utf8_bytes(tag) > MAX_TAG_BYTES:
            raise InvalidInputError(
                "tags",
                f'each tag in `tags` may be at most {MAX_TAG_BYTES} bytes: "{tag[:30]}…" is longer',
            )
    return tags


OUTPUT_SCHEMA: Final = REMEMBER_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    content = _content(arguments)
    memory_type = optional_choice(arguments, "type", MEMORY_TYPES, default="project") or "project"
    category = _category(arguments)
    tags = _tags(arguments)
    scope = optional_choice(arguments, "scope", SCOPES, default="project") or "project"
    if scope == "conversation" and ctx.conversation is None:
        raise InvalidInputError(
            "scope",
            f'`scope` "conversation" needs {ctx.conversation_via}, and this request is in no '
            'conversation; use scope "project" to keep it for the project',
        )
    replaces = (
        memory_id(arguments, "replaces") if optional(arguments, "replaces") is not None else None
    )
    expires_in_days = optional_int(
        arguments, "expires_in_days", low=MIN_EXPIRY_DAYS, high=MAX_EXPIRY_DAYS
    )
    answer = await service.remember(
        ctx.tenant,
        ctx.conversation,
        content=content,
        memory_type=memory_type,
        category=category,
        tags=tags,
        scope=scope,
        replaces=replaces,
        expires_in_days=expires_in_days,
    )
    return Reply(
        text=render_remembered(answer),
        data=remember_data(answer, preview=preview(answer.memory)),
    )
