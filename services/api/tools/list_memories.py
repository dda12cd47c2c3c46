"""list_memories: newest first, without a search."""

from __future__ import annotations

from typing import Annotated, Final

from msgspec import UNSET

from services.api.tools.arguments import (
    MAX_LIMIT,
    MIN_LIMIT,
    Limit,
    Maybe,
    MemoryTypeChoice,
    ToolArguments,
    about,
    given,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.mistyped import mistyped_tenant
from services.api.tools.render import preview, render_list
from services.api.tools.structured import ListedMemory, ListOutput, Reply
from shared.operations import OperationsContext
from shared.operations.browse import list_memories

DEFAULT_LIMIT: Final = 20


class ListArguments(ToolArguments, frozen=True):
    type: Maybe[Annotated[MemoryTypeChoice, about("Filter to one type.")]] = UNSET
    limit: Annotated[Limit, about(f"{MIN_LIMIT}-{MAX_LIMIT}, default {DEFAULT_LIMIT}.")] = (
        DEFAULT_LIMIT
    )


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: ListArguments) -> Reply:
    memory_type = given(arguments.type, None)
    memories = await list_memories(
        ops, ctx.tenant, ctx.conversation, memory_type=memory_type, limit=arguments.limit
    )
    hint = "" if memories else await mistyped_tenant(ops, ctx)
    return Reply(
        text=render_list(memories, memory_type=memory_type, hint=hint),
        data=ListOutput(memories=[ListedMemory.of(m, preview=preview(m)) for m in memories]),
    )


LIST_MEMORIES: Final = ToolDefinition(
    name="list_memories",
    description=(
        "List this project's memories newest first, without a search; use recall to search by "
        "meaning. Includes this conversation's own notes and excludes other conversations'."
    ),
    arguments=ListArguments,
    output=ListOutput,
    handle=handle,
)
