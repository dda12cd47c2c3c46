"""forget: permanently delete one memory, or every memory a filter selects (counted first)."""

from __future__ import annotations

from typing import Annotated, Final

from msgspec import UNSET, Meta, UnsetType

from services.api.tools.arguments import (
    CategoryFilter,
    Maybe,
    MemoryId,
    MemoryTypeChoice,
    TagFilter,
    ToolArguments,
    about,
    given,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.render import render_bulk_forget, render_forget
from services.api.tools.structured import ForgetOutput, Reply
from shared.errors import InvalidInputError
from shared.memories.selection import BULK_FORGET_BATCH, ForgetFilter
from shared.operations import OperationsContext
from shared.operations.forget import forget, forget_matching

MAX_OLDER_THAN_DAYS: Final = 36_500


class FilterArguments(ToolArguments, frozen=True):
    """What to delete; every field given must hold."""

    type: Maybe[MemoryTypeChoice] = UNSET
    category: Maybe[CategoryFilter] = UNSET
    tag: Maybe[TagFilter] = UNSET
    conversation_only: Annotated[
        bool, about("Only this conversation's own notes (scope conversation).")
    ] = False
    older_than_days: Maybe[
        Annotated[
            int,
            Meta(ge=1, le=MAX_OLDER_THAN_DAYS),
            about(f"Only memories stored more than this many days ago (1-{MAX_OLDER_THAN_DAYS})."),
        ]
    ] = UNSET


class ForgetArguments(ToolArguments, frozen=True):
    id: Maybe[Annotated[MemoryId, about("One memory id, as recall shows it.")]] = UNSET
    filter: Maybe[
        Annotated[
            FilterArguments, about("Instead of id: what to delete; every field given must hold.")
        ]
    ] = UNSET
    confirm: Maybe[
        Annotated[bool, about("With filter: true deletes; without it the call only counts.")]
    ] = UNSET


def forget_filter(arguments: FilterArguments, ctx: ToolContext) -> ForgetFilter:
    match = ForgetFilter(
        memory_type=given(arguments.type, None),
        category=given(arguments.category, "").strip() or None,
        tag=given(arguments.tag, "").strip() or None,
        notes_only=arguments.conversation_only,
        older_than_days=given(arguments.older_than_days, None),
    )
    if match == ForgetFilter():
        fields = ", ".join(FilterArguments.__struct_fields__)
        raise InvalidInputError(
            "filter",
            f"`filter` is empty: name at least one of {fields} (forget never deletes everything "
            "at once)",
        )
    if match.notes_only and ctx.conversation is None:
        raise InvalidInputError(
            "filter.conversation_only",
            f"`filter.conversation_only` needs {ctx.conversation_via}",
        )
    return match


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: ForgetArguments) -> Reply:
    target, chosen, confirm = arguments.id, arguments.filter, arguments.confirm
    if isinstance(chosen, UnsetType) and not isinstance(target, UnsetType):
        if not isinstance(confirm, UnsetType):
            raise InvalidInputError("confirm", "`confirm` goes with `filter`; `id` deletes at once")
        memory_id = target.strip()
        deleted = await forget(ops, ctx.tenant, ctx.conversation, memory_id=memory_id)
        found = int(deleted)
        data = ForgetOutput(deleted=found, matched=found, remaining=0, confirmed=True)
        return Reply(text=render_forget(memory_id, deleted=deleted), data=data)
    if isinstance(chosen, UnsetType) or not isinstance(target, UnsetType):
        raise InvalidInputError(
            "id", "give either `id` (one memory) or `filter` (many), not both and not neither"
        )
    match, deletes = forget_filter(chosen, ctx), given(confirm, default=False)
    answer = await forget_matching(ops, ctx.tenant, ctx.conversation, match=match, confirm=deletes)
    return Reply(
        text=render_bulk_forget(answer, confirm=deletes),
        data=ForgetOutput(
            deleted=answer.deleted,
            matched=answer.matched,
            remaining=answer.remaining,
            confirmed=deletes,
        ),
    )


FORGET: Final = ToolDefinition(
    name="forget",
    description=(
        "Permanently delete one memory that has become wrong (`id`), or every memory a `filter` "
        "selects. When a fact is merely out of date, prefer remembering the correction with "
        "`replaces`. Forgetting one version of a corrected fact deletes only that version: what "
        "it replaced stays retired and what replaced it stays current. A filter first only "
        f"counts: nothing is deleted without confirm: true, and then at most {BULK_FORGET_BATCH} "
        "per call (the answer says how many remain). A filter matches current and replaced "
        "versions alike, and never another conversation's notes."
    ),
    arguments=ForgetArguments,
    output=ForgetOutput,
    handle=handle,
)
