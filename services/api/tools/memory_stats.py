"""memory_stats: how many memories this conversation can see, by type."""

from __future__ import annotations

from typing import Final

from services.api.tools.arguments import ToolArguments
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.mistyped import mistyped_tenant
from services.api.tools.render import render_stats
from services.api.tools.structured import Reply, StatsOutput
from shared.memories.listing import STATS_SCAN_CAP
from shared.operations import OperationsContext
from shared.operations.browse import stats


class StatsArguments(ToolArguments, frozen=True):
    """None: the counts are of what this request may see."""


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: StatsArguments) -> Reply:
    answer = await stats(ops, ctx.tenant, ctx.conversation)
    data = StatsOutput(total=answer.total, by_type=dict(answer.by_type), lower_bound=answer.capped)
    empty = answer.total == 0 and not answer.capped
    hint = await mistyped_tenant(ops, ctx) if empty else ""
    return Reply(text=render_stats(answer, cap=STATS_SCAN_CAP, hint=hint), data=data)


MEMORY_STATS: Final = ToolDefinition(
    name="memory_stats",
    description=(
        "Count this project's memories by type: what recall and list_memories can show (the "
        f"project's memories plus this conversation's own). Exact up to {STATS_SCAN_CAP}; past "
        "that it reports a lower bound and says so."
    ),
    arguments=StatsArguments,
    output=StatsOutput,
    handle=handle,
)
