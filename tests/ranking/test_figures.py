"""The restated-figure rule's pure part: which measures a sentence gives, which sentence pairs of
two chat turns may restate one figure, and which candidate their embeddings link; and, at recall,
whether the sentences that answer the question give another value of one figure."""

from __future__ import annotations

from shared.model import Hit, Memory, Scope
from shared.ranking.figure_reading import figure_sentences, figures
from shared.ranking.figures import (
    MAX_PAIRS,
    FigureCheck,
    answers_with_another_figure,
    figure_candidates,
    first_restated,
)

# Words both turns hold, so that they share enough to be about one thing.
CONTEXT = "The script parses each resume with spaCy and writes the skills to the database."
# What makes either turn long: read sentence by sentence, and never linked.
LONGER = " The nightly job runs it over the whole queue and reports the failures to the channel."
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


def test_turns_with_another_value_of_one_kind_give_sentence_pairs() -> None:
    pairs = FigureCheck(NEW).pairs(OLD)
    assert pairs and len(pairs) <= MAX_PAIRS
    assert all("140MB" in new and "250MB" in old for new, old in pairs)
    # A fix several times better is the same figure revised (250MB → 40MB).
    assert FigureCheck(NEW.replace("140MB", "40MB")).pairs(OLD)


def test_no_pairs_for_another_kind_a_far_value_an_addition_or_a_short_text() -> None:
    assert FigureCheck(NEW.replace("140MB", "140ms")).pairs(OLD) == []  # a duration, not a size
    assert FigureCheck(NEW.replace("140MB", "40GB")).pairs(OLD) == []  # 160 times as much
    assert FigureCheck(NEW.replace("which is", "which also is")).pairs(OLD) == []
    assert FigureCheck("The script now uses 140MB.").pairs(OLD) == []
    assert FigureCheck(NEW).pairs("The script uses 250MB.") == []
    assert FigureCheck(NEW).pairs(OLD.replace("250MB", "140MB")) == []  # the same value


def test_no_pairs_when_either_text_is_long() -> None:
    assert FigureCheck(NEW).pairs(OLD)
    assert FigureCheck(NEW + LONGER).pairs(OLD) == []
    assert FigureCheck(NEW).pairs(OLD + LONGER) == []


def test_turns_about_other_things_give_no_pairs() -> None:
    other = (
        "The quarterly report lists 300MB of attachments for the finance team, and marketing "
        "asked for a new landing page with a video header and a signup form."
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


# Two chat messages on one deadline, worded apart: the question's terms tell which sentences
# answer it.
PLANNED = (
    "I'm working on sprint planning for the Twitter API integration and I need to set a sprint "
    "deadline of April 1, 2024, to complete the Instagram automation prototype. Can you help me "
    "create a project plan and timeline for this?"
)
MOVED = (
    "I'm trying to adjust the sprint deadline for my Instagram automation prototype to April 5, "
    "2024, as mentioned, but I'm having trouble updating the schedule. Can you help me "
    "implement a function to update the deadline in my project management tool?"
)
ASKED_PLANNED = ASKED_MOVED = frozenset({"deadlin", "instagram", "autom", "prototyp", "sprint"})


def test_the_sentence_answering_the_question_gives_another_value_of_its_figure() -> None:
    assert answers_with_another_figure(MOVED, PLANNED, (ASKED_MOVED, ASKED_PLANNED))


def test_no_other_answer_for_the_same_value_another_kind_a_far_value_or_an_addition() -> None:
    asked = (ASKED_MOVED, ASKED_PLANNED)
    same = MOVED.replace("April 5", "April 1")
    assert not answers_with_another_figure(same, PLANNED, asked)
    # "April 1, 2024" also said in the newer: the figure is repeated, not replaced.
    repeated = MOVED + " The old plan said April 1, 2024."
    assert not answers_with_another_figure(repeated, PLANNED, asked)
    other_kind = MOVED.replace("to April 5, 2024,", "by 40%")
    assert not answers_with_another_figure(other_kind, PLANNED, asked)
    far = MOVED.replace("April 5, 2024", "April 5, 2027")
    assert not answers_with_another_figure(far, PLANNED, asked)
    added = MOVED.replace("adjust the sprint deadline", "also add a sprint deadline")
    assert not answers_with_another_figure(added, PLANNED, asked)


def test_a_sentence_leaving_out_words_of_the_question_tells_of_something_else() -> None:
    """The same measure of another thing: "graphing quiz score" for "proof writing quiz
    score", "the notifications module" for "the payments module"."""
    older = (
        "I noticed that when I extended my study time to 6 hours this week, my proof writing "
        "quiz score went up to 90%. How should I plan next week?"
    )
    newer = (
        "By studying for 4.5 hours, I reached a 95% score on my graphing quiz. What should I "
        "review before the next one?"
    )
    asked_old = frozenset({"hour", "studi", "week", "proof", "write", "quiz", "score"})
    asked_new = frozenset({"hour", "studi", "quiz", "score"})
    assert not answers_with_another_figure(newer, older, (asked_new, asked_old))
    payments = (
        "I ran pytest-cov on the payments module and coverage is only 58%, mostly missing the "
        "refund paths. Can you show me how to write parametrized tests for the refund service?"
    )
    notifications = (
        "The notifications module has 91% test coverage, but the tests are slow because they "
        "hit a real SMTP server. How do I swap in a fake SMTP server for pytest?"
    )
    asked_old = frozenset({"payment", "modul", "coverag"})
    asked_new = frozenset({"modul", "test", "coverag"})
    assert not answers_with_another_figure(notifications, payments, (asked_new, asked_old))
    # The payments module's own coverage, in other words, is another answer.
    revised = "With the new refund tests in place, coverage on the payments module is now at 83%."
    asked_new = frozenset({"payment", "modul", "test", "coverag"})
    assert answers_with_another_figure(revised, payments, (asked_new, asked_old))


def test_the_verb_giving_the_older_figure_may_be_said_otherwise() -> None:
    """A figure is given with another verb as often as not ("takes about 14 minutes to run" →
    "is down to roughly 6 minutes per run"); no other word of the question may be left out."""
    older = (
        "I've been looking at our GitHub Actions setup for the backend repo and the whole CI "
        "pipeline currently takes about 14 minutes to run, mostly because of the integration "
        "tests. Can you suggest ways to parallelize the jobs?"
    )
    newer = (
        "After splitting the test job into a matrix, the backend repo's CI pipeline is down to "
        "roughly 6 minutes per run. How would you add a coverage gate without slowing it down?"
    )
    asked = frozenset({"ci", "pipelin", "take", "run", "backend", "repo"})
    assert answers_with_another_figure(newer, older, (asked - {"take"}, asked))
    # Left out as well: "backend", which is no verb of the figure.
    frontend = newer.replace("backend", "frontend")
    assert not answers_with_another_figure(frontend, older, (asked - {"take", "backend"}, asked))


def test_what_a_leading_clause_adds_is_the_cause_of_the_newer_figure() -> None:
    """ "After … adding back-translation augmentation, the classifier gets 88%" says why the
    figure changed; it adds nothing beside the older's figure."""
    older = (
        "user: My sentiment classifier (a fine-tuned DistilBERT) reaches 81% accuracy on the "
        "validation set, but it struggles with sarcasm. Could data augmentation help?"
    )
    newer = (
        "user: After cleaning the labels and adding back-translation augmentation, the "
        "sentiment classifier gets 88% accuracy on the validation set. Any pitfalls with ONNX?"
    )
    asked_new = frozenset({"accuraci", "sentiment", "classifi", "valid", "set"})
    asked_old = asked_new | {"reach"}
    assert answers_with_another_figure(newer, older, (asked_new, asked_old))
    # Said in the clause that gives the figure, the addition is one.
    beside = newer.replace("After cleaning the labels and adding", "With").replace(
        "the sentiment classifier gets", "the sentiment classifier also gets"
    )
    assert not answers_with_another_figure(beside, older, (asked_new, asked_old))


def test_the_question_words_are_read_in_the_clause_of_the_newer_figure() -> None:
    """A word said after the clause of the figure ("… easier than limits") compares; it is not
    what was scored."""
    older = (
        "I just finished the limits quiz and scored 14/20, mostly losing points on the squeeze "
        "theorem questions. Can you walk me through a squeeze theorem example?"
    )
    newer = (
        "On the derivatives quiz I scored 17/20, which felt much easier than limits. Should I "
        "review the chain rule anyway before the midterm?"
    )
    asked = frozenset({"score", "limit", "quiz"})
    assert not answers_with_another_figure(newer, older, (asked, asked))
    retaken = newer.replace("On the derivatives quiz", "On the limits quiz")
    assert answers_with_another_figure(retaken, older, (asked, asked))


def test_a_figure_asked_about_answers_nothing() -> None:
    asked_about = (
        "Should I move the sprint deadline for my Instagram automation prototype to April 5, "
        "2024? Can you help me implement a function to update the deadline in my project "
        "management tool?"
    )
    assert not answers_with_another_figure(asked_about, PLANNED, (ASKED_MOVED, ASKED_PLANNED))


def test_a_sentence_holding_one_word_of_the_question_answers_nothing() -> None:
    asked = (frozenset({"deadlin"}), frozenset({"deadlin"}))
    assert not answers_with_another_figure(MOVED, PLANNED, asked)


def test_a_figure_said_of_another_time_answers_nothing_anew() -> None:
    before = MOVED.replace("I'm trying to adjust", "Back in 2021 I tried to adjust")
    assert not answers_with_another_figure(before, PLANNED, (ASKED_MOVED, ASKED_PLANNED))


def test_sentences_naming_apart_what_they_measure_give_no_pairs() -> None:
    context = (
        "The script parses each resume with spaCy, writes the extracted skills to the database "
        "and reports each failure."
    )
    frontend = "Your frontend Docker build currently takes around 9 minutes every time. " + context
    backend = "The backend Docker build takes about 4 minutes, mostly compiling Go. " + context
    again = "I reordered the steps and the frontend Docker build takes about 3 minutes. " + context
    assert FigureCheck(backend).pairs(frontend) == []
    assert FigureCheck(again).pairs(frontend)
    # How a figure is summed up is said loosely: "total" for "average" names nothing apart.
    average = "I reduced the average frame processing latency of my app to 210ms. " + context
    total = "The total frame latency of my app is currently at 180ms with counting on. " + context
    assert FigureCheck(total).pairs(average)
    # Nor does the verb giving the figure, led by its subject or an adverb.
    usual = "It usually uses around 1.5GB of memory on the queue. " + context
    now = "Since the fix the worker container uses about 600MB of memory on the queue. " + context
    assert FigureCheck(now).pairs(usual)


def test_a_speaker_label_is_no_part_of_the_first_sentence() -> None:
    before = NEW.replace("I'm trying", "Back in 2021, I was trying").replace(
        "which is currently", "which was"
    )
    assert FigureCheck("user: " + before).pairs("user: " + OLD) == []
    assert FigureCheck("user: " + NEW).pairs("user: " + OLD)
