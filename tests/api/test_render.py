"""The prose the model reads, rule by rule: budgets, excerpts, guidance and every status line.

These are the texts an agent acts on, so each rule is read here on the exact words it produces;
the end-to-end tests read the same answers through the MCP client.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from services.api.tools.recall_text import render_recall
from services.api.tools.render import (
    PREFIX,
    PREVIEW_CHARS,
    distinct_words,
    percent,
    plural,
    preview,
    render_bulk_forget,
    render_forget,
    render_get,
    render_history,
    render_list,
    render_memory,
    render_remembered,
    render_stats,
)
from services.api.tools.structured import Reply
from shared.lexical import terms
from shared.lexical.excerpt import CHARS_PER_TOKEN, LONG_MEMORY_CHARS
from shared.memories.listing import ListFilter, StatsAnswer
from shared.memories.selection import BULK_FORGET_BATCH
from shared.model import Memory
from shared.operations.forget import BulkForgetAnswer
from shared.operations.history import Version
from shared.operations.recall import RecallAnswer
from shared.operations.remember import RememberAnswer
from shared.ranking import Ranked, RecallOutcome
from shared.ranking.modes import RecallMode

CREATED = "2026-03-04T05:06:07.890Z"


def wire(reply: Reply) -> dict[str, Any]:
    """The reply's data as structuredContent carries it."""
    return msgspec.to_builtins(reply.data)  # type: ignore[no-any-return]


def memory(number: int, content: str = "the deploy runs on Fridays", **fields: object) -> Memory:
    return Memory(
        id=f"01J{number:023d}",
        tenant="acme",
        content=content,
        created_at=CREATED,
        **fields,  # type: ignore[arg-type]
    )


def ranked(
    stored: Memory, *, score: float, confidence: str = "medium", matched: tuple[str, ...] = ()
) -> Ranked:
    return Ranked(
        memory=stored,
        similarity=score,
        relevance=score,
        score=score,
        matched=matched,
        confidence=confidence,  # type: ignore[arg-type]
    )


def answer(
    *results: Ranked, mode: RecallMode = "balanced", visible: int = 10, confidence: str = "medium"
) -> RecallAnswer:
    return RecallAnswer(
        mode=mode,
        visible=visible,
        outcome=RecallOutcome(
            results=results,
            gated=0,
            confidence=confidence,  # type: ignore[arg-type]
            top_score=max((r.score for r in results), default=0.0),
        ),
    )


# --- small rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "whole", "expected"),
    [(0.125, 1.0, 13), (0.124, 1.0, 12), (1.0, 1.0, 100), (2.0, 1.0, 100), (0.3, 0.0, 0)],
)
def test_percent_rounds_half_up_and_never_passes_a_hundred(
    part: float, whole: float, expected: int
) -> None:
    assert percent(part, whole) == expected


def test_plural_agrees_with_the_count() -> None:
    assert plural(1, "memory", "memories") == "1 memory"
    assert plural(0, "memory", "memories") == "0 memories"
    assert plural(2, "memory", "memories") == "2 memories"


@pytest.mark.parametrize(
    ("matched", "expected"),
    [
        (["e1042", "1042"], ["e1042"]),
        (["timeout", "nginx_proxy_timeout", "nginx"], ["nginx_proxy_timeout"]),
        (["deploy", "friday", "deploy"], ["deploy", "friday"]),
        ([], []),
    ],
)
def test_distinct_words_drops_parts_of_a_longer_word_and_keeps_the_order(
    matched: list[str], expected: list[str]
) -> None:
    assert distinct_words(matched) == expected


def test_preview_is_the_flattened_text_when_short() -> None:
    assert preview(memory(1, "line one\n\n  line two")) == "line one line two"


def test_preview_of_a_long_memory_says_its_length_and_where_to_read_it_whole() -> None:
    text = "word " * 400
    shown = preview(memory(1, text))
    assert shown.startswith("word word")
    assert f"({len(text):,} characters; memory_get shows it whole)" in shown
    assert len(shown.split("…")[0]) == PREVIEW_CHARS - 1


def test_a_memory_block_names_its_facets_in_order() -> None:
    stored = memory(
        7,
        category="deploy",
        tags=("ops", "ci"),
        scope="conversation",
        conversation="c-1",
        expires_at="2027-01-01T00:00:00.000Z",
    )
    block = render_memory(3, stored, standing=80, confidence="high", matched=["deploy"])
    first, body, words, tags = block.split("\n")
    assert first == (
        f"3. [id:{stored.id}] (project/deploy, this conversation only, high confidence, "
        "80% of the top result, stored 2026-03-04, expires 2027-01-01)"
    )
    assert body == "   the deploy runs on Fridays"
    assert words == "   matched words: deploy"
    assert tags == "   tags: ops, ci"


# --- recall --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "suggests_exploratory"), [("precision", True), ("balanced", False)]
)
def test_nothing_stored_on_the_subject_says_so_and_warns_against_inferring(
    mode: RecallMode, suggests_exploratory: bool
) -> None:
    reply = render_recall(
        "who owns billing", RecallAnswer(mode=mode, visible=0, outcome=None), max_tokens=2000
    )
    assert reply.text.startswith(f'{PREFIX} No memories stored for this project matched "who')
    assert "NO MATCH FOUND" in reply.text
    assert "do not infer an answer" in reply.text
    assert ("mode 'exploratory'" in reply.text) is suggests_exploratory
    assert wire(reply)["confidence"] == "none"
    assert wire(reply)["results"] == []


@pytest.mark.parametrize(
    ("compared", "wording"),
    [
        (1, "the 1 memory closest to the query was compared and is not"),
        (12, "the 12 memories closest to the query were compared and none is"),
    ],
)
def test_nothing_close_enough_counts_what_was_compared(compared: int, wording: str) -> None:
    empty = RecallAnswer(
        mode="balanced",
        visible=compared,
        outcome=RecallOutcome(results=(), gated=compared, confidence="low", top_score=0.0),
    )
    reply = render_recall("billing", empty, max_tokens=2000)
    assert "NO CONFIDENT MATCH" in reply.text
    assert wording in reply.text
    assert "Do not present a guess as a remembered fact." in reply.text
    assert wire(reply)["compared"] == compared


@pytest.mark.parametrize(
    ("confidence", "line"),
    [
        ("high", "HIGH CONFIDENCE: these memories match closely; use them directly."),
        ("medium", "MEDIUM CONFIDENCE: these memories are related;"),
        ("low", "LOW CONFIDENCE: these memories share rare words"),
    ],
)
def test_the_answer_states_its_confidence_first(confidence: str, line: str) -> None:
    reply = render_recall(
        "deploy day",
        answer(ranked(memory(1), score=0.6, confidence=confidence), confidence=confidence),
        max_tokens=2000,
    )
    header, confidence_line = reply.text.split("\n")[:2]
    assert header == f'{PREFIX} 1 memory matched "deploy day" (mode: balanced).'
    assert confidence_line.startswith(line)
    assert wire(reply)["confidence"] == confidence


def test_standing_is_relative_to_the_top_result_never_a_raw_cosine() -> None:
    reply = render_recall(
        "deploy",
        answer(ranked(memory(1), score=0.62), ranked(memory(2, "deploy notes"), score=0.31)),
        max_tokens=2000,
    )
    assert "100% of the top result" in reply.text
    assert "50% of the top result" in reply.text
    assert "0.62" not in reply.text and "0.31" not in reply.text
    assert [r["standing"] for r in wire(reply)["results"]] == [100, 50]


def test_a_matched_stem_is_shown_as_the_query_word_it_came_from() -> None:
    query = "which cities host the offsites"
    stems = tuple(t for t in terms(query) if t.startswith("citi"))
    assert stems, "the tokeniser stems 'cities'"
    reply = render_recall(
        query,
        answer(ranked(memory(1, "Offsites rotate between three cities"), score=0.5, matched=stems)),
        max_tokens=2000,
    )
    assert "matched words: cities" in reply.text
    assert wire(reply)["results"][0]["matched"] == ["cities"]


def test_a_long_memory_is_shown_as_the_excerpt_around_its_matched_word() -> None:
    filler = "The gateway forwards requests to the pool. " * 60
    content = filler + "Set NGINX_PROXY_TIMEOUT_Q2000 to 75 seconds for the upload path."
    assert len(content) > LONG_MEMORY_CHARS
    matched = tuple(terms("NGINX_PROXY_TIMEOUT_Q2000"))
    reply = render_recall(
        "NGINX_PROXY_TIMEOUT_Q2000",
        answer(ranked(memory(1, content), score=0.7, matched=matched)),
        max_tokens=2000,
    )
    assert f"of {len(content):,}; memory_get shows it whole]" in reply.text
    assert "NGINX_PROXY_TIMEOUT_Q2000 to 75 seconds" in reply.text
    assert content not in reply.text
    result = wire(reply)["results"][0]
    assert result["excerpt"]["end"] == len(content)
    assert "NGINX_PROXY_TIMEOUT_Q2000" in result["text"]


@pytest.mark.parametrize("max_tokens", [300, 700, 1000, 2000])
def test_a_budget_keeps_results_in_order_and_says_what_it_left_out(max_tokens: int) -> None:
    long_text = "The release checklist covers staging, canary and rollback. " * 40
    results = [ranked(memory(i, long_text), score=0.6 - i / 100) for i in range(1, 13)]
    reply = render_recall("release checklist", answer(*results), max_tokens=max_tokens)
    assert len(reply.text) <= max_tokens * CHARS_PER_TOKEN
    shown = wire(reply)["results"]
    assert [r["id"] for r in shown] == [r.memory.id for r in results[: len(shown)]]
    left_out = len(results) - len(shown)
    assert left_out >= 1
    assert wire(reply)["left_out"] == left_out
    assert wire(reply)["left_out_chars"] == left_out * len(long_text)
    assert (
        f"({plural(left_out, 'more result', 'more results')}, "
        f"{left_out * len(long_text):,} characters, left out to fit max_tokens={max_tokens}; "
    ) in reply.text


def test_the_first_result_is_shown_however_small_the_budget() -> None:
    long_text = "Rotate the signing key every ninety days and record who did it. " * 50
    reply = render_recall(
        "signing key", answer(ranked(memory(1, long_text), score=0.5)), max_tokens=100
    )
    assert len(wire(reply)["results"]) == 1
    assert wire(reply)["left_out"] == 0
    assert "Rotate the signing key" in reply.text
    assert long_text not in reply.text


def test_results_that_fit_are_shown_whole_with_no_left_out_line() -> None:
    results = [ranked(memory(i, f"fact number {i}"), score=0.5) for i in range(1, 4)]
    reply = render_recall("fact", answer(*results), max_tokens=2000)
    for i in range(1, 4):
        assert f"   fact number {i}" in reply.text
    assert "left out" not in reply.text
    assert wire(reply)["left_out"] == 0 and wire(reply)["max_tokens"] == 2000


# --- remember, list, get, history, forget, stats -------------------------------------------


def test_a_new_memory_is_acknowledged_with_its_id_length_and_a_preview_never_the_body() -> None:
    body = "x" * 3000
    text = render_remembered(RememberAnswer(memory=memory(1, body), already_known=False))
    assert text.startswith(f"{PREFIX} Stored as {memory(1).id}.")
    assert "Stored 3,000 characters." in text
    assert body not in text


def test_an_already_known_fact_says_nothing_new_was_written() -> None:
    text = render_remembered(RememberAnswer(memory=memory(1), already_known=True))
    assert "Already known" in text and "nothing new was written" in text
    assert "Stored" not in text.split("\n\n")[0].replace("Already known", "")


def test_a_replacement_is_explained() -> None:
    old = memory(2, "the deploy runs on Thursdays")
    text = render_remembered(
        RememberAnswer(
            memory=memory(1, expires_at="2026-12-31T00:00:00.000Z"),
            already_known=False,
            replaced=old,
        )
    )
    assert f"It replaces {old.id} (stored 2026-03-04), which is now retired" in text
    assert "It expires on 2026-12-31." in text


def test_a_probable_update_names_the_memory_and_both_ways_out() -> None:
    near = memory(3, "the deploy runs on Thursdays")
    text = render_remembered(RememberAnswer(memory=memory(1), already_known=False, supersedes=near))
    assert f"It probably updates {near.id} (stored 2026-03-04): " in text
    assert '"the deploy runs on Thursdays"' in text
    assert f"marks {near.id} as probably outdated" in text
    assert f"with replaces={near.id} to retire it" in text
    assert "with supersedes: false to undo the link" in text


def test_an_undone_link_says_both_stay_current() -> None:
    text = render_remembered(RememberAnswer(memory=memory(1), already_known=True, kept=("01OLD",)))
    assert "Undid its link to 01OLD: both stay current" in text


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        (ListFilter(), f"{PREFIX} This project has no memories yet."),
        (
            ListFilter(memory_type="pattern"),
            f'{PREFIX} This project has no memories of type "pattern" yet.',
        ),
        (
            ListFilter(tag="ops", stored_after=1_800_000_000_000),
            f'{PREFIX} No memories match these filters: tag "ops", stored at or after '
            "2027-01-15T08:00:00.000Z.",
        ),
    ],
)
def test_an_empty_list_says_which_list_is_empty(match: ListFilter, expected: str) -> None:
    assert render_list([], match=match) == expected


def test_a_list_numbers_previews_newest_first_and_says_it_is_the_last_page() -> None:
    text = render_list([memory(2, "second"), memory(1, "first " * 100)], match=ListFilter())
    assert text.startswith(f"{PREFIX} 2 memories, newest first.")
    assert f"1. [id:{memory(2).id}]" in text and f"2. [id:{memory(1).id}]" in text
    assert "memory_get shows it whole" in text
    assert text.endswith("No more pages: that is every memory that matches.")


def test_a_page_with_more_after_it_says_where_the_cursor_goes() -> None:
    text = render_list([memory(2, "second")], match=ListFilter(), next_cursor="CUR-1")
    assert text.endswith(
        'More match: for the next page, call list_memories again with cursor "CUR-1" and the '
        "same filters."
    )


def test_an_empty_page_after_a_cursor_says_the_walk_is_over() -> None:
    text = render_list([], match=ListFilter(tag="ops"), resumed=True)
    assert text == f"{PREFIX} No more memories match: the previous page was the last."
    # A body filter that read its fill without a match still hands on the cursor.
    text = render_list([], match=ListFilter(tag="ops"), next_cursor="CUR-2")
    assert text.startswith(f"{PREFIX} None of the memories read so far match.")
    assert 'cursor "CUR-2"' in text


def test_forget_says_whether_anything_was_deleted() -> None:
    assert render_forget("01JX", deleted=True) == f"{PREFIX} Deleted 01JX."
    assert "Nothing was deleted." in render_forget("01JX", deleted=False)


def test_history_shows_each_version_with_its_status() -> None:
    current, replaced = memory(3, "runs on Fridays"), memory(2, "runs on Thursdays")
    expired = memory(1, "runs on Mondays", expires_at="2026-04-01T00:00:00.000Z")
    versions = [
        Version(memory_id=current.id, memory=current, replaced_by=(), expired=False),
        Version(memory_id=replaced.id, memory=replaced, replaced_by=(current.id,), expired=False),
        Version(memory_id=expired.id, memory=expired, replaced_by=(), expired=True),
        Version(memory_id="01JGONE", memory=None, replaced_by=(), expired=False),
    ]
    text = render_history(current.id, versions)
    assert text.startswith(f"{PREFIX} 4 versions of the fact {current.id} belongs to")
    assert "   status: current" in text
    assert f"   status: replaced by {current.id}" in text
    assert "   status: expired 2026-04-01" in text
    assert "4. [id:01JGONE] (forgotten: deleted by forget)" in text


def test_history_and_get_of_an_unseen_id_answer_alike() -> None:
    unseen = f"{PREFIX} No memory with id 01JX is visible to this request."
    assert render_history("01JX", None) == unseen
    assert render_get("01JX", None) == unseen
    gone = Version(memory_id="01JX", memory=None, replaced_by=(), expired=False)
    assert render_get("01JX", gone) == unseen


def test_get_shows_the_whole_memory_and_a_replacement() -> None:
    body = "step " * 500
    stored = memory(1, body)
    text = render_get(
        stored.id,
        Version(memory_id=stored.id, memory=stored, replaced_by=("01JNEW",), expired=False),
    )
    assert text.startswith(f"{PREFIX} Memory {stored.id} ({len(body):,} characters).")
    assert body in text
    assert "status: replaced by 01JNEW: recall no longer returns it" in text


def test_bulk_forget_without_confirm_counts_and_names_the_batch_limit() -> None:
    text = render_bulk_forget(BulkForgetAnswer(matched=3, deleted=0), confirm=False)
    assert text.startswith(f"{PREFIX} 3 memories match this filter")
    assert "Nothing was deleted" in text and "confirm: true" in text
    assert f"at most {BULK_FORGET_BATCH} per call" in text


@pytest.mark.parametrize(
    ("remaining", "wording"),
    [(5, "Deleted 2; 5 more match. Call forget again"), (0, "Deleted 2; nothing else matches.")],
)
def test_bulk_forget_with_confirm_says_whether_to_go_on(remaining: int, wording: str) -> None:
    text = render_bulk_forget(BulkForgetAnswer(matched=2 + remaining, deleted=2), confirm=True)
    assert wording in text


def test_stats_break_down_by_type_in_the_design_order() -> None:
    stats = StatsAnswer(by_type={"reference": 2, "project": 5}, capped=False)
    assert render_stats(stats, cap=10_000) == (
        f"{PREFIX} 7 memories for this project (project: 5, reference: 2)."
    )


def test_stats_past_the_cap_are_a_lower_bound() -> None:
    text = render_stats(StatsAnswer(by_type={"project": 10_000}, capped=True), cap=10_000)
    assert text.startswith(f"{PREFIX} At least 10000 memories for this project")
    assert "every figure is a lower bound" in text


def test_stats_of_an_empty_project() -> None:
    empty = StatsAnswer(by_type={}, capped=False)
    assert render_stats(empty, cap=10_000) == f"{PREFIX} This project has no memories yet."
