"""The restated-figure rule's pure part: which measures a sentence gives, which sentence pairs of
two long texts may restate one figure, and which candidate their embeddings link."""

from __future__ import annotations

from shared.model import Hit, Memory, Scope
from shared.ranking.figures import (
    MAX_PAIRS,
    FigureCheck,
    figure_candidates,
    figure_sentences,
    figures,
    first_restated,
)

# Words both long texts hold, so that they share enough to be about one thing.
CONTEXT = (
    "The script reads every resume from the upload folder, parses it with spaCy and writes the "
    "extracted skills into the matching database. The nightly job runs it over the whole queue "
    "and reports the failures to the channel."
)
OLD = (
    "I'm trying to optimize the memory usage of my batch resume processing script, which "
    "currently uses around 250MB of peak memory. " + CONTEXT
)
NEW = (
    "I'm trying to optimize the batch resume processing memory usage, which is currently "
    "averaging around 140MB per session, and I want the logging to stay detailed. " + CONTEXT
)


def hit(content: str, similarity: float, memory_id: str, scope: Scope = "project") -> Hit:
    memory = Memory(
        id=memory_id,
        tenant="t",
        content=content,
        created_at="2026-01-01T00:00:00.000Z",
        scope=scope,
        conversation="chat:1" if scope == "conversation" else None,
    )
    return Hit(memory=memory, similarity=similarity)


def test_a_sentence_gives_sizes_durations_percentages_scores_and_dates() -> None:
    said = figures("It used 512MB, took 180ms and 2 hours, hit 88%, scored 18/20 by April 5, 2024.")
    assert ("size", 512e6) in said and ("duration", 0.18) in said and ("duration", 7200.0) in said
    assert ("percent", 88.0) in said and ("out of 20", 0.9) in said
    assert any(kind == "date" for kind, _ in said)
    assert figures("We have 3 services and 12 tables.") == frozenset()  # counts are no measure


def test_code_blocks_are_skipped_and_code_pieces_left_out_of_a_prose_sentence() -> None:
    text = "```\nlimit = 100MB\n```\nThe peak is 90MB with f(x) quoted in the notes ->-> 3,31\n"
    found = figure_sentences(text)
    assert [held for _, held in found] == [frozenset({("size", 90e6)})]
    assert "f(x)" not in found[0][0][0]


def test_a_run_on_sentence_is_also_read_up_to_the_clause_of_its_figure() -> None:
    (readings, _), *_ = figure_sentences(NEW)
    assert readings[0].endswith("to stay detailed.")
    assert readings[1].endswith("around 140MB per session")


def test_long_texts_with_another_value_of_one_kind_give_sentence_pairs() -> None:
    pairs = FigureCheck(NEW).pairs(OLD)
    assert pairs and len(pairs) <= MAX_PAIRS
    assert all("140MB" in new and "250MB" in old for new, old in pairs)


def test_no_pairs_for_another_kind_a_far_value_an_addition_or_a_short_text() -> None:
    assert FigureCheck(NEW.replace("140MB", "140ms")).pairs(OLD) == []  # a duration, not a size
    assert FigureCheck(NEW.replace("140MB", "40GB")).pairs(OLD) == []  # 160 times as much
    assert FigureCheck(NEW.replace("which is", "which also is")).pairs(OLD) == []
    assert FigureCheck("The script now uses 140MB.").pairs(OLD) == []
    assert FigureCheck(NEW).pairs("The script uses 250MB.") == []
    assert FigureCheck(NEW).pairs(OLD.replace("250MB", "140MB")) == []  # the same value


def test_long_texts_about_other_things_give_no_pairs() -> None:
    other = (
        "The quarterly report lists 300MB of attachments for the finance team. Marketing asked "
        "for a new landing page with a video header and a signup form for the newsletter, and "
        "legal wants the cookie banner reviewed before the campaign starts next month."
    )
    assert FigureCheck(other).pairs(OLD) == []


def test_the_nearest_candidate_whose_sentences_say_the_same_is_linked() -> None:
    near, far = hit(OLD, 0.8, "near"), hit(OLD, 0.6, "far")
    candidates = figure_candidates(NEW, [far, near], scope="project")
    assert [h.memory.id for h, _ in candidates] == ["near", "far"]
    sentences = {s for _, pairs in candidates for pair in pairs for s in pair}
    alike = {s: [1.0, 0.0] for s in sentences}
    assert first_restated(candidates, alike) == near
    apart = {s: [1.0, 0.0] if "140MB" in s else [0.0, 1.0] for s in sentences}
    assert first_restated(candidates, apart) is None


def test_a_note_never_stands_in_for_a_project_memory() -> None:
    project = hit(OLD, 0.9, "p")
    assert figure_candidates(NEW, [project], scope="conversation") == []
    note = hit(OLD, 0.9, "n", scope="conversation")
    assert [h.memory.id for h, _ in figure_candidates(NEW, [note], scope="conversation")] == ["n"]
