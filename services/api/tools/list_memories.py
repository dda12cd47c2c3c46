"""list_memories: newest first, without a search, filtered and paged with a cursor."""

from __future__ import annotations

from typing import Annotated, Final

from msgspec import UNSET

from services.api.tools.arguments import (
    MAX_LIMIT,
    MIN_LIMIT,
    CategoryFilter,
    Limit,
    Maybe,
    MemoryTypeChoice,
    TagFilter,
    ToolArguments,
    about,
    given,
)
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.mistyped import mistyped_tenant
from services.api.tools.render import preview, render_list
from services.api.tools.structured import ListedMemory, ListOutput, Reply
from shared.memories.cursor import MAX_CURSOR_CHARS
from shared.memories.listing import ListFilter, clamped_ms
from shared.model import parse_iso_ms
from shared.operations import OperationsContext
from shared.operations.browse import list_page

DEFAULT_LIMIT: Final = 20
_ISO = "ISO 8601 date or date and time (2025-01-31, 2025-01-31T09:30:00Z; without a zone, UTC)"


class ListArguments(ToolArguments, frozen=True):
    type: Maybe[Annotated[MemoryTypeChoice, about("Filter to one type.")]] = UNSET
    category: Maybe[CategoryFilter] = UNSET
    tag: Maybe[TagFilter] = UNSET
    stored_after: Maybe[
        Annotated[str, about(f"Only memories stored at or after this {_ISO}.", iso_time=True)]
    ] = UNSET
    stored_before: Maybe[
        Annotated[str, about(f"Only memories stored before this {_ISO}.", iso_time=True)]
    ] = UNSET
    limit: Annotated[Limit, about(f"{MIN_LIMIT}-{MAX_LIMIT}, default {DEFAULT_LIMIT}.")] = (
        DEFAULT_LIMIT
    )
    cursor: Maybe[
        Annotated[
            str,
            about(
                "The next page: the cursor the previous answer gave, with the same filters "
                f"(at most {MAX_CURSOR_CHARS} characters). Leave it out for the newest.",
                non_blank=True,
                max_utf8_bytes=MAX_CURSOR_CHARS,
            ),
        ]
    ] = UNSET


def _instant(value: str | None) -> int | None:
    ms = None if value is None else parse_iso_ms(value.strip())
    return None if ms is None else clamped_ms(ms)


def list_filter(arguments: ListArguments) -> ListFilter:
    """The listing's filter the arguments name (which refuses dates out of order)."""
    after = _instant(given(arguments.stored_after, None))
    before = _instant(given(arguments.stored_before, None))
    return ListFilter(
        memory_type=given(arguments.type, None),
        category=given(arguments.category, "").strip() or None,
        tag=given(arguments.tag, "").strip() or None,
        stored_after=after,
        stored_before=before,
    )


async def handle(ops: OperationsContext, ctx: ToolContext, arguments: ListArguments) -> Reply:
    match = list_filter(arguments)
    cursor = given(arguments.cursor, None)
    page = await list_page(
        ops, ctx.tenant, ctx.conversation, match=match, limit=arguments.limit, cursor=cursor
    )
    memories = page.memories
    hint = "" if memories or cursor is not None else await mistyped_tenant(ops, ctx)
    return Reply(
        text=render_list(
            memories,
            match=match,
            next_cursor=page.next_cursor,
            resumed=cursor is not None,
            hint=hint,
        ),
        data=ListOutput(
            memories=[ListedMemory.of(m, preview=preview(m)) for m in memories],
            next_cursor=page.next_cursor,
        ),
    )


LIST_MEMORIES: Final = ToolDefinition(
    name="list_memories",
    description=(
        "List this project's memories newest first, without a search; use recall to search by "
        "meaning. Filter by type, category, tag and the time stored (stored_after, "
        "stored_before). When more match than `limit`, the answer gives a `cursor`: pass it back "
        "with the same filters for the next page, until the answer says there are no more. "
        "Includes this conversation's own notes and excludes other conversations'."
    ),
    arguments=ListArguments,
    output=ListOutput,
    handle=handle,
)
