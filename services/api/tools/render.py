"""The prose the model reads. Never a raw cosine: standing is shown relative to the top result."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from services.api.tools.structured import NewerVersion, RecallOutput, RecallResult, Reply, Span
from shared.lexical.excerpt import CHARS_PER_TOKEN, Excerpt, excerpt
from shared.memories.listing import StatsAnswer
from shared.memories.selection import BULK_FORGET_BATCH
from shared.model import DRAFT_FIELDS, MEMORY_TYPES, Memory
from shared.model.tokens import shown
from shared.operations.forget import BulkForgetAnswer
from shared.operations.history import Version
from shared.operations.recall import RecallAnswer
from shared.operations.remember import RememberAnswer
from shared.ranking import Ranked

PREFIX: Final = "[MEMORY]"
# What list_memories and remember show of a memory: its first characters, never the body.
PREVIEW_CHARS: Final = 200
# Kept free for the line saying what a budget left out.
_LEFT_OUT_RESERVE: Final = 160
# However small the budget, the first result shows this much of its text.
_MIN_BODY_CHARS: Final = 120
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


def _passage(memory: Memory, part: Excerpt | None) -> str:
    """A long memory's passage around the words it matched (its beginning when it matched by
    meaning alone), marked as an excerpt; a short memory whole (``part`` None)."""
    if part is None:
        return memory.content
    return _marker(part.start, part.end, len(memory.content)) + part.of(memory.content)


def _marker(start: int, end: int, total: int) -> str:
    return f"[excerpt, characters {start + 1}-{end} of {total:,}; memory_get shows it whole] "


def _excerpt_overhead(memory: Memory) -> int:
    """What an excerpt of ``memory`` shows beside its words, at the most: the marker with the
    widest numbers it can hold, and an ellipsis at either end."""
    total = len(memory.content)
    return len(_marker(total, total, total)) + 2


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


def _no_match_guidance(mode: str) -> str:
    suggestions = []
    if mode == "precision":
        suggestions.append("try mode 'exploratory' for a looser search")
    suggestions.append("try rephrasing the query")
    suggestions.append("once the answer is known, store it with remember")
    return (
        "NO MATCH FOUND: nothing is stored on this subject. Suggestions: "
        + "; ".join(suggestions)
        + ". An empty memory is no evidence about the subject: do not infer an answer from it."
    )


def _gated_guidance(compared: int) -> str:
    """``compared``: the memories this request may see that either leg brought up (the closest
    by meaning and the best by words), not the whole tenant."""
    searched = (
        "the 1 memory closest to the query was compared and is not"
        if compared == 1
        else f"the {compared} memories closest to the query were compared and none is"
    )
    return (
        f"NO CONFIDENT MATCH: {searched} close enough. Rephrase the query, or reason from first "
        "principles and say that you did. Do not present a guess as a remembered fact."
    )


_CONFIDENCE_LINES: Final = {
    "high": "HIGH CONFIDENCE: these memories match closely; use them directly.",
    "medium": "MEDIUM CONFIDENCE: these memories are related; check that they apply before "
    "relying on them.",
    "low": "LOW CONFIDENCE: these memories share rare words with the query, or carry it as their "
    "category or a tag, but little of its meaning; treat them as leads, not answers.",
}


def render_recall(query: str, answer: RecallAnswer, *, max_tokens: int) -> Reply:
    """The answer, within ``max_tokens`` (characters ÷ 4): results in rank order while they
    fit, the first one always (its text cut to fit), and a line saying what was left out; the
    data says the same of exactly what the text shows."""
    outcome = answer.outcome
    data = RecallOutput(
        mode=answer.mode,
        confidence="none",
        compared=answer.visible,
        results=[],
        left_out=0,
        left_out_chars=0,
        max_tokens=max_tokens,
    )
    if outcome is None or not outcome.results:
        return Reply(text=_nothing_matched(query, answer), data=data)
    data.confidence = outcome.confidence
    header = (
        f"{PREFIX} {plural(len(outcome.results), 'memory', 'memories')} matched "
        f'"{query}" (mode: {answer.mode}).\n{_CONFIDENCE_LINES[outcome.confidence]}\n'
    )
    # A stem is shown as the query's word it came from ("cities", not "citi").
    words = shown(query)
    by_id = {ranked.memory.id: ranked.memory for ranked in outcome.results}
    budget = max_tokens * CHARS_PER_TOKEN - len(header) - _LEFT_OUT_RESERVE
    blocks: list[str] = []
    for i, ranked in enumerate(outcome.results, start=1):

        def block(body: str, ranked: Ranked = ranked, i: int = i) -> str:
            return render_memory(
                i,
                ranked.memory,
                body=body,
                standing=percent(ranked.score, outcome.top_score),
                confidence=ranked.confidence,
                matched=[words.get(term, term) for term in ranked.matched],
                links=link_lines([by_id[n] for n in ranked.superseded_by], ranked.supersedes),
            )

        part = excerpt(ranked.memory.content, ranked.matched)
        shown_block = block(_passage(ranked.memory, part))
        if len(shown_block) + 1 > budget and blocks:
            data.left_out += 1
            data.left_out_chars += len(ranked.memory.content)
            continue
        if len(shown_block) + 1 > budget:
            # The first result is always shown, cut to what the budget leaves for its text.
            room = max(_MIN_BODY_CHARS, budget - len(block("")) - _excerpt_overhead(ranked.memory))
            part = excerpt(ranked.memory.content, ranked.matched, chars=room, longest=room)
            shown_block = block(_passage(ranked.memory, part))
        blocks.append(shown_block)
        budget -= len(shown_block) + 1
        newer = [by_id[n] for n in ranked.superseded_by]
        data.results.append(
            _result_data(ranked, part, words, top_score=outcome.top_score, newer_memories=newer)
        )
    tail = _left_out_line(data.left_out, data.left_out_chars, max_tokens=max_tokens)
    return Reply(text=f"{header}\n" + "\n".join(blocks) + tail, data=data)


def _nothing_matched(query: str, answer: RecallAnswer) -> str:
    """Nothing stored on the subject (no candidate at all), or nothing close enough."""
    if answer.outcome is None:
        text = f'{PREFIX} No memories stored for this project matched "{query}".\n'
        return text + _no_match_guidance(answer.mode)
    text = f'{PREFIX} Nothing matched "{query}" closely enough.\n'
    return text + _gated_guidance(answer.visible)


def _result_data(
    ranked: Ranked,
    part: Excerpt | None,
    words: dict[str, str],
    *,
    top_score: float,
    newer_memories: Sequence[Memory],
) -> RecallResult:
    """What the data says of one result shown: the text shown of it, and where that text is."""
    return RecallResult.of(
        ranked.memory,
        confidence=ranked.confidence,
        standing=percent(ranked.score, top_score),
        matched=distinct_words([words.get(t, t) for t in ranked.matched]),
        text=part.of(ranked.memory.content) if part else ranked.memory.content,
        excerpt=Span(start=part.start, end=part.end) if part else None,
        superseded_by=[NewerVersion(id=n.id, created_at=n.created_at) for n in newer_memories],
        supersedes=list(ranked.supersedes),
    )


def _left_out_line(count: int, chars: int, *, max_tokens: int) -> str:
    if not count:
        return ""
    return (
        f"\n({plural(count, 'more result', 'more results')}, "
        f"{chars:,} characters, left out to fit max_tokens={max_tokens}; "
        "raise max_tokens, or memory_get an id, to read more.)"
    )


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


def render_list(memories: Sequence[Memory], *, memory_type: str | None) -> str:
    if not memories:
        if memory_type is None:
            return f"{PREFIX} This project has no memories yet."
        return f'{PREFIX} This project has no memories of type "{memory_type}" yet.'
    header = f"{PREFIX} {plural(len(memories), 'memory', 'memories')}, newest first."
    blocks = [render_memory(i, m, body=preview(m)) for i, m in enumerate(memories, start=1)]
    return f"{header}\n\n" + "\n".join(blocks)


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


def render_stats(answer: StatsAnswer, *, cap: int) -> str:
    if answer.total == 0 and not answer.capped:
        return f"{PREFIX} This project has no memories yet."
    breakdown = ", ".join(f"{t}: {answer.by_type[t]}" for t in MEMORY_TYPES if t in answer.by_type)
    counted = plural(answer.total, "memory", "memories")
    if answer.capped:
        return (
            f"{PREFIX} At least {counted} for this project ({breakdown}). Counting stopped at "
            f"{cap} keys, so every figure is a lower bound."
        )
    return f"{PREFIX} {counted} for this project ({breakdown})."
