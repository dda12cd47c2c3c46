"""list_memories: newest first, without a search."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import preview, render_list
from services.api.service import MemoryService
from services.api.structured import LIST_OUTPUT, memory_record
from services.api.tools.arguments import MAX_LIMIT, optional_choice, optional_limit
from services.api.tools.spec import ToolContext
from shared.model import MEMORY_TYPES

DEFAULT_LIMIT: Final = 20
NAME: Final = "list_memories"
DESCRIPTION: Final = (
    "List this project's memories newest first, without a search; use recall to search by "
    "meaning. Includes this conversation's own notes and excludes other conversations'."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "type": {
            "type": "string",
            "enum": list(MEMORY_TYPES),
            "description": "Filter to one type.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": "1-50, default 20.",
        },
    },
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = LIST_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    memory_type = optional_choice(arguments, "type", MEMORY_TYPES, default=None)
    limit = optional_limit(arguments, default=DEFAULT_LIMIT)
    memories = await service.list_memories(
        ctx.tenant, ctx.conversation, memory_type=memory_type, limit=limit
    )
    return Reply(
        text=render_list(memories, memory_type=memory_type),
        data={"memories": [{**memory_record(m), "preview": preview(m)} for m in memories]},
    )
