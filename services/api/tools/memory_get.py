"""memory_get: one memory whole, by id: what an excerpt or a preview leaves out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import render_get
from services.api.service import MemoryService
from services.api.structured import GET_OUTPUT, get_data
from services.api.tools.arguments import memory_id
from services.api.tools.spec import ToolContext

NAME: Final = "memory_get"
DESCRIPTION: Final = (
    "Read one memory whole by its id. recall shows a long memory as the passage that matched "
    "and list_memories a preview; call this when you need the rest. A replaced version is "
    "shown with what replaced it."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "description": "A memory id, as recall or list_memories shows it.",
        },
    },
    "required": ["id"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = GET_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    target = memory_id(arguments, "id")
    version = await service.get(ctx.tenant, ctx.conversation, memory_id=target)
    return Reply(text=render_get(target, version), data=get_data(target, version))
