"""memory_get: one memory whole, by id: what an excerpt or a preview leaves out."""

from __future__ import annotations

from typing import Annotated, Final

from services.api.tools.arguments import MemoryId, ToolArguments, about
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.render import render_get
from services.api.tools.structured import GetOutput, Reply
from shared.operations import OperationsContext
from shared.operations.history import get


class GetArguments(ToolArguments, frozen=True):
    id: Annotated[MemoryId, about("A memory id, as recall or list_memories shows it.")]


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: GetArguments) -> Reply:
    target = arguments.id.strip()
    version = await get(ops, ctx.tenant, ctx.conversation, memory_id=target)
    return Reply(text=render_get(target, version), data=GetOutput.of(target, version))


MEMORY_GET: Final = ToolDefinition(
    name="memory_get",
    description=(
        "Read one memory whole by its id. recall shows a long memory as the passage that "
        "matched and list_memories a preview; call this when you need the rest. A replaced "
        "version is shown with what replaced it."
    ),
    arguments=GetArguments,
    output=GetOutput,
    handle=handle,
)
