"""The recall tool's prose: the results that fit the caller's budget, each as a block of text
and as structured data saying the same, or why nothing was returned."""

from __future__ import annotations

from typing import Final

from services.api.tools.render import (
    PREFIX,
    distinct_words,
    link_lines,
    percent,
    plural,
    render_memory,
)
from services.api.tools.structured import NewerVersion, RecallOutput, RecallResult, Reply, Span
from shared.lexical.excerpt import CHARS_PER_TOKEN, Excerpt, excerpt
from shared.model import Memory
from shared.model.tokens import shown
from shared.operations.recall import RecallAnswer
from shared.ranking import Ranked, RecallOutcome

# Kept free for the line saying what a budget left out.
_LEFT_OUT_RESERVE: Final = 160
# However small the budget, the first result shows this much of its text.
_MIN_BODY_CHARS: Final = 120


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


def render_recall(query: str, answer: RecallAnswer, *, max_tokens: int, hint: str = "") -> Reply:
    """The answer, within ``max_tokens`` (characters ÷ 4): results in rank order while they
    fit, the first one always (its text cut to fit), and a line saying what was left out; the
    data says the same of exactly what the text shows. ``hint``: what an answer with no
    candidate at all adds (``mistyped``: the tenant probably meant)."""
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
        return Reply(text=_nothing_matched(query, answer, hint=hint), data=data)
    data.confidence = outcome.confidence
    header = (
        f"{PREFIX} {plural(len(outcome.results), 'memory', 'memories')} matched "
        f'"{query}" (mode: {answer.mode}).\n{_CONFIDENCE_LINES[outcome.confidence]}\n'
    )
    # A stem is shown as the query's word it came from ("cities", not "citi").
    blocks = _Blocks(outcome, words=shown(query))
    budget = max_tokens * CHARS_PER_TOKEN - len(header) - _LEFT_OUT_RESERVE
    shown_blocks: list[str] = []
    for i, ranked in enumerate(outcome.results, start=1):
        part = excerpt(ranked.memory.content, ranked.matched)
        text = blocks.block(i, ranked, _passage(ranked.memory, part))
        if len(text) + 1 > budget and shown_blocks:
            data.left_out += 1
            data.left_out_chars += len(ranked.memory.content)
            continue
        if len(text) + 1 > budget:
            part = blocks.cut_to_fit(i, ranked, budget)
            text = blocks.block(i, ranked, _passage(ranked.memory, part))
        shown_blocks.append(text)
        budget -= len(text) + 1
        data.results.append(blocks.result_data(ranked, part))
    tail = _left_out_line(data.left_out, data.left_out_chars, max_tokens=max_tokens)
    return Reply(text=f"{header}\n" + "\n".join(shown_blocks) + tail, data=data)


class _Blocks:
    """How one recall's results are written: each as a text block and as its data."""

    def __init__(self, outcome: RecallOutcome, *, words: dict[str, str]) -> None:
        self._top_score = outcome.top_score
        self._words = words
        self._by_id = {ranked.memory.id: ranked.memory for ranked in outcome.results}

    def block(self, i: int, ranked: Ranked, body: str) -> str:
        return render_memory(
            i,
            ranked.memory,
            body=body,
            standing=percent(ranked.score, self._top_score),
            confidence=ranked.confidence,
            matched=[self._words.get(term, term) for term in ranked.matched],
            links=link_lines(self._newer(ranked), ranked.supersedes),
        )

    def cut_to_fit(self, i: int, ranked: Ranked, budget: int) -> Excerpt | None:
        """The first result is always shown: its excerpt cut to what the budget leaves."""
        beside = len(self.block(i, ranked, "")) + _excerpt_overhead(ranked.memory)
        room = max(_MIN_BODY_CHARS, budget - beside)
        return excerpt(ranked.memory.content, ranked.matched, chars=room, longest=room)

    def result_data(self, ranked: Ranked, part: Excerpt | None) -> RecallResult:
        """What the data says of one result shown: the text shown of it, and where it is."""
        return RecallResult.of(
            ranked.memory,
            confidence=ranked.confidence,
            standing=percent(ranked.score, self._top_score),
            matched=distinct_words([self._words.get(t, t) for t in ranked.matched]),
            text=part.of(ranked.memory.content) if part else ranked.memory.content,
            excerpt=Span(start=part.start, end=part.end) if part else None,
            superseded_by=[
                NewerVersion(id=n.id, created_at=n.created_at) for n in self._newer(ranked)
            ],
            supersedes=list(ranked.supersedes),
        )

    def _newer(self, ranked: Ranked) -> list[Memory]:
        return [self._by_id[n] for n in ranked.superseded_by]


def _nothing_matched(query: str, answer: RecallAnswer, *, hint: str) -> str:
    """Nothing stored on the subject (no candidate at all), or nothing close enough."""
    if answer.outcome is None:
        text = f'{PREFIX} No memories stored for this project matched "{query}".{hint}\n'
        return text + _no_match_guidance(answer.mode)
    text = f'{PREFIX} Nothing matched "{query}" closely enough.\n'
    return text + _gated_guidance(answer.visible)


def _left_out_line(count: int, chars: int, *, max_tokens: int) -> str:
    if not count:
        return ""
    return (
        f"\n({plural(count, 'more result', 'more results')}, "
        f"{chars:,} characters, left out to fit max_tokens={max_tokens}; "
        "raise max_tokens, or memory_get an id, to read more.)"
    )
