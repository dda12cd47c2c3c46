"""The prose the model reads of a memory, a list, a history or a forget; recall's own is in
``recall_text``. Never a raw cosine: standing is shown relative to the top result."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from shared.memories.listing import ListFilter, StatsAnswer
from shared.memories.selection import BULK_FORGET_BATCH
from shared.model import DRAFT_FIELDS, MEMORY_TYPES, Memory, iso_ms
from shared.operations.forget import BulkForgetAnswer
from shared.operations.history import Version
from shared.operations.remember import RememberAnswer

PREFIX: Final = "[MEMORY]"
# What list_memories and remember show of a memory: its first characters, never the body.
PREVIEW_CHARS: Final = 200
# The caller's fields a memory's block shows in its first line or as its body; each other one
# is a line of its own when set, ``name: value`` (``tags: a, b``).
_IN_HEADLINE: Final = frozenset({"content", "memory_type", "category", "scope"})
_LABELLED: Final = tuple(field for field in DRAFT_FIELDS if field.name not in _IN_HEADLINE)


def plural(count: int, singular: str, many: str) -> str:
    return f"{count} {singular if count == 1 else many}"


def percent(part: float, whole: float) -> int:
    """Half-up rounding (as people read percentages), not Python's round-half-even."""
    if whole <= 0:
        return 0
    return math.floor(100 * min(1.0, part / whole) + 0.5)


def render_memory(
    index: int,
    memory: Memory,
    *,
    body: str | None = None,
    standing: int | None = None,
    confidence: str | None = None,
    matched: Sequence[str] = (),
    links: Sequence[str] = (),
) -> str:
    """One memory as a numbered block; ``body`` is what to show of it (whole by default);
    ``links``: lines saying which memories probably update it, or which it updates."""
    kind = memory.memory_type + (f"/{memory.category}" if memory.category else "")
    facets = [kind]
    if memory.scope == "conversation":
        facets.append("this conversation only")
    if confidence is not None:
        facets.append(f"{confidence} confidence")
    if standing is not None:
        facets.append(f"{standing}% of the top result")
    facets.append(f"stored {memory.created_at[:10]}")
    if memory.expires_at is not None:
        facets.append(f"expires {memory.expires_at[:10]}")
    shown = memory.content if body is None else body
    lines = [f"{index}. [id:{memory.id}] ({', '.join(facets)})", f"   {shown}"]
    if matched:
        # The query's words this memory holds: why a keyword hit was returned, in plain terms.
        lines.append(f"   matched words: {', '.join(distinct_words(matched))}")
    for field in _LABELLED:
        value = getattr(memory, field.name)
        if value not in (None, "", ()):
            shown = ", ".join(value) if isinstance(value, tuple) else value
            lines.append(f"   {field.outward}: {shown}")
    lines.extend(f"   {line}" for line in links)
    return "\n".join(lines)


def link_lines(superseded_by: Sequence[Memory], supersedes: Sequence[str]) -> list[str]:
    """What a memory's probable-update links say of it, in plain words."""
    lines = [
        f"PROBABLY OUTDATED: {newer.id} (stored {newer.created_at[:10]}) probably updates it; "
        "prefer that one"
        for newer in superseded_by
    ]
    if supersedes:
        lines.append(f"probably updates {', '.join(supersedes)}")
    return lines


def preview(memory: Memory) -> str:
    """The first ``PREVIEW_CHARS`` of a memory on one line, and its length when that is not all."""
    flat = " ".join(memory.content.split())
    if len(flat) <= PREVIEW_CHARS:
        return flat
    return f"{flat[: PREVIEW_CHARS - 1]}… ({_length(memory)}; memory_get shows it whole)"


def _length(memory: Memory) -> str:
    return f"{len(memory.content):,} characters"


def distinct_words(matched: Sequence[str]) -> list[str]:
    """The matched words once each, without the parts of a longer one also listed (``e1042``
    rather than ``e1042, 1042``)."""
    kept: list[str] = []
    for term in sorted(set(matched), key=lambda t: (-len(t), t)):
        if not any(term in longer for longer in kept):
            kept.append(term)
    return sorted(kept, key=list(matched).index)


def render_remembered(answer: RememberAnswer) -> str:
    memory = answer.memory
    if answer.already_known:
        head = (
            f"{PREFIX} Already known — an existing memory already says this, so nothing new "
            "was written."
        )
    else:
        head = f"{PREFIX} Stored as {memory.id}."
    notes = []
    replaced = answer.replaced
    if replaced is not None:
        notes.append(
            f"It replaces {replaced.id} (stored {replaced.created_at[:10]}), which is now "
            "retired: recall, list_memories and memory_stats no longer show it, and "
            "memory_history shows both."
        )
    updated = answer.supersedes
    if updated is not None:
        notes.append(
            f"It probably updates {updated.id} (stored {updated.created_at[:10]}): "
            f'"{flattened(updated.content, chars=160)}". Linked: recall now ranks this one '
            f"first and marks {updated.id} as probably outdated. If {updated.id} is simply "
            f"wrong now, remember this fact again with replaces={updated.id} to retire it; if "
            "both are current, remember it again with supersedes: false to undo the link."
        )
    if answer.kept:
        notes.append(
            f"Undid its link to {', '.join(answer.kept)}: both stay current, ranked by "
            "relevance alone."
        )
    if memory.expires_at is not None and not answer.already_known:
        notes.append(f"It expires on {memory.expires_at[:10]}.")
    if not answer.already_known:
        notes.append(f"Stored {_length(memory)}.")
    tail = "".join(f"\n{note}" for note in notes)
    # The caller sent the body: it gets the id, a preview and the length, never the body back.
    return f"{head}{tail}\n\n{render_memory(1, memory, body=preview(memory))}"


def flattened(content: str, *, chars: int) -> str:
    """``content`` on one line, cut to ``chars`` with an ellipsis when it is longer."""
    flat = " ".join(content.split())
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def _filters_said(match: ListFilter) -> str:
    """The filters given, as the empty answer names them: ``type "pattern", tag "ops"``."""
    said = [
        f'{name} "{value}"'
        for name, value in (
            ("type", match.memory_type),
            ("category", match.category),
            ("tag", match.tag),
        )
        if value is not None
    ]
    if match.stored_after is not None:
        said.append(f"stored at or after {iso_ms(match.stored_after)}")
    if match.stored_before is not None:
        said.append(f"stored before {iso_ms(match.stored_before)}")
    return ", ".join(said)


def _next_page(next_cursor: str | None) -> str:
    if next_cursor is None:
        return "No more pages: that is every memory that matches."
    return (
        f'More match: for the next page, call list_memories again with cursor "{next_cursor}" '
        "and the same filters."
    )


def render_list(
    memories: Sequence[Memory],
    *,
    match: ListFilter,
    next_cursor: str | None = None,
    resumed: bool = False,
    hint: str = "",
) -> str:
    """``hint``: what an empty first page adds (``mistyped``: the tenant probably meant);
    ``resumed``: the page follows a cursor."""
    if not memories:
        return _render_none(match, next_cursor=next_cursor, resumed=resumed, hint=hint)
    header = f"{PREFIX} {plural(len(memories), 'memory', 'memories')}, newest first."
    blocks = [render_memory(i, m, body=preview(m)) for i, m in enumerate(memories, start=1)]
    return f"{header}\n\n" + "\n".join(blocks) + f"\n{_next_page(next_cursor)}"


def _render_none(match: ListFilter, *, next_cursor: str | None, resumed: bool, hint: str) -> str:
    if next_cursor is not None:  # a body filter read its fill and found none
        return f"{PREFIX} None of the memories read so far match. {_next_page(next_cursor)}"
    if resumed:
        return f"{PREFIX} No more memories match: the previous page was the last."
    said = _filters_said(match)
    if match == ListFilter():
        return f"{PREFIX} This project has no memories yet.{hint}"
    if match == ListFilter(memory_type=match.memory_type):
        return f'{PREFIX} This project has no memories of type "{match.memory_type}" yet.{hint}'
    return f"{PREFIX} No memories match these filters: {said}.{hint}"


def render_forget(memory_id: str, *, deleted: bool) -> str:
    if deleted:
        return f"{PREFIX} Deleted {memory_id}."
    return f"{PREFIX} No memory with id {memory_id} exists for this project. Nothing was deleted."


def render_history(memory_id: str, versions: Sequence[Version] | None) -> str:
    if versions is None:
        return f"{PREFIX} No memory with id {memory_id} is visible to this request."
    header = (
        f"{PREFIX} {plural(len(versions), 'version', 'versions')} of the fact {memory_id} "
        "belongs to, newest first."
    )
    blocks = []
    for i, version in enumerate(versions, start=1):
        memory = version.memory
        if memory is None:
            blocks.append(f"{i}. [id:{version.memory_id}] (forgotten: deleted by forget)")
            continue
        if version.expired:
            status = f"expired {memory.expires_at[:10] if memory.expires_at else ''}"
        elif version.replaced_by:
            status = f"replaced by {', '.join(version.replaced_by)}"
        else:
            status = "current"
        links = link_lines(version.superseded_by, [m.id for m in version.supersedes])
        blocks.append(f"{render_memory(i, memory, links=links)}\n   status: {status}")
    return f"{header}\n\n" + "\n".join(blocks)


def render_get(memory_id: str, version: Version | None) -> str:
    if version is None or version.memory is None:
        return f"{PREFIX} No memory with id {memory_id} is visible to this request."
    links = link_lines(version.superseded_by, [m.id for m in version.supersedes])
    block = render_memory(1, version.memory, links=links)
    if version.replaced_by:
        status = f"replaced by {', '.join(version.replaced_by)}: recall no longer returns it"
        block += f"\n   status: {status}"
    return f"{PREFIX} Memory {memory_id} ({_length(version.memory)}).\n\n{block}"


def render_bulk_forget(answer: BulkForgetAnswer, *, confirm: bool) -> str:
    matched = plural(answer.matched, "memory matches", "memories match")
    if not confirm:
        return (
            f"{PREFIX} {matched} this filter (current and replaced versions). Nothing was "
            "deleted: call forget again with the same filter and confirm: true to delete "
            f"them, at most {BULK_FORGET_BATCH} per call."
        )
    if answer.remaining:
        return (
            f"{PREFIX} Deleted {answer.deleted}; {answer.remaining} more match. Call forget "
            "again with the same filter and confirm: true to go on."
        )
    return f"{PREFIX} Deleted {answer.deleted}; nothing else matches."


def render_stats(answer: StatsAnswer, *, cap: int, hint: str = "") -> str:
    if answer.total == 0 and not answer.capped:
        return f"{PREFIX} This project has no memories yet.{hint}"
    breakdown = ", ".join(f"{t}: {answer.by_type[t]}" for t in MEMORY_TYPES if t in answer.by_type)
    counted = plural(answer.total, "memory", "memories")
    if answer.capped:
        return (
            f"{PREFIX} At least {counted} for this project ({breakdown}). Counting stopped at "
            f"{cap} keys, so every figure is a lower bound."
        )
    return f"{PREFIX} {counted} for this project ({breakdown})."
