"""forget: permanently delete one memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.render import render_forget
from services.api.service import MemoryService
from services.api.tools.arguments import required_text
from services.api.tools.spec import ToolContext

NAME: Final = "forget"
DESCRIPTION: Final = (
    "Permanently delete one memory that has become wrong. When a fact is merely out of date, "
    "prefer remembering the correction: the newer memory outranks the older one."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "The memory id, as returned by recall."},
    },
    "required": ["id"],
    "additionalProperties": False,
}


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> str:
    memory_id = required_text(arguments, "id").strip()
    deleted = await service.forget(ctx.tenant, ctx.conversation, memory_id=memory_id)
    return render_forget(memory_id, deleted=deleted)
