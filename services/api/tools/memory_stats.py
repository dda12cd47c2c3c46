"""memory_stats: how many memories this conversation can see, by type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.api.answers import Reply
from services.api.render import render_stats
from services.api.service import STATS_SCAN_CAP, MemoryService
from services.api.structured import STATS_OUTPUT, stats_data
from services.api.tools.spec import ToolContext

NAME: Final = "memory_stats"
DESCRIPTION: Final = (
    "Count this project's memories by type: what recall and list_memories can show (the "
    f"project's memories plus this conversation's own). Exact up to {STATS_SCAN_CAP}; past that "
    "it reports a lower bound and says so."
)
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


OUTPUT_SCHEMA: Final = STATS_OUTPUT


async def handle(service: MemoryService, ctx: ToolContext, arguments: Mapping[str, Any]) -> Reply:
    answer = await service.stats(ctx.tenant, ctx.conversation)
    return Reply(text=render_stats(answer, cap=STATS_SCAN_CAP), data=stats_data(answer))
