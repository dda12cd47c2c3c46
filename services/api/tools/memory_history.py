"""memory_history: every version of a corrected fact, newest first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import render_history
from services.api.service import MemoryService
from services.api.structured import HISTORY_OUTPUT, history_data
from services.api.tools.arguments import memory_id
from services.api.tools.spec import ToolContext

NAME: Final = "memory_history"
DESCRIPTION: Final = (
    "Show how a fact changed: every version linked to this memory id by `replaces`, newest "
    "first, with the date each was stored and what replaced it. Works for a retired id too "
    "(one that recall no longer returns)."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "Any version's memory id."},
    },
    "required": ["id"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: Final = HISTORY_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    target = memory_id(arguments, "id")
    versions = await service.history(ctx.tenant, ctx.conversation, memory_id=target)
    return Reply(text=render_history(target, versions), data=history_data(target, versions))
