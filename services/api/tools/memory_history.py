"""memory_history: every version of a corrected fact, newest first."""

from __future__ import annotations

from typing import Annotated, Final

from services.api.tools.arguments import MemoryId, ToolArguments, about
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.render import render_history
from services.api.tools.structured import HistoryOutput, Reply
from shared.operations import OperationsContext
from shared.operations.history import history


class HistoryArguments(ToolArguments, frozen=True):
    id: Annotated[MemoryId, about("Any version's memory id.")]


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: HistoryArguments) -> Reply:
    target = arguments.id.strip()
    versions = await history(ops, ctx.tenant, ctx.conversation, memory_id=target)
    return Reply(text=render_history(target, versions), data=HistoryOutput.of(target, versions))


MEMORY_HISTORY: Final = ToolDefinition(
    name="memory_history",
    description=(
        "Show how a fact changed: every version linked to this memory id by `replaces`, newest "
        "first, with the date each was stored and what replaced it. Works for a retired id too "
        "(one that recall no longer returns)."
    ),
    arguments=HistoryArguments,
    output=HistoryOutput,
    handle=handle,
)
