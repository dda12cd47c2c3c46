"""Is a newer memory a revision of an older one, by their words (``shared.ranking.versions``):
the same subject, said with another value (pure)."""

from __future__ import annotations

from typing import Final

from shared.model.tokens import STOP_WORDS
from shared.ranking.asked_subject import leaves_asked_subject
from shared.ranking.chat_turns import speaker
from shared.ranking.dedup import DEDUP_MIN_WORD_OVERLAP
from shared.ranking.memory_readings import (
    is_a_fact,
    says_it_adds,
    values_of,
    wording_of,
    words_of,
)
from shared.ranking.wording import states_something

# Content words (stop words left out) a revision with a changed value shares with what it
# revises: most corrections reach it, few unrelated facts do (docs/calibration.md).
REVISION_CONTENT_OVERLAP: Final = 0.25


def revises(newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]] | None) -> bool:
    """Whether ``newer`` is on the same subject as ``older``, as a revision of it: dedup's word
    overlap or, where their values differ (numbers, dates, versions, identifiers, names:
    ``Wording.values``; "Priya took over the security review" after "… go to Grace"), a looser
    overlap of content words (a correction rewords more than a resend: "we raised the retry
    count to 7" against "retries 3 times"; stop words are left out, or any two English
    sentences would qualify), or, between two facts of a sentence or so, the newer holding
    every one of the question's words the older holds (``asked``: the newer's and the older's;
    the same words, or more) with a value of its own ("Harbor's job queue runs on Amazon SQS."
    after "Background jobs in Harbor go through RabbitMQ."; "The CI image has an on-call
    runbook in the wiki." gives nothing in place of "The CI image runs on Go 1.23."): holding
    more of them, it answers the question as fully; or, with no value of its own, each led by a word
    the other lacks and holding some of the question's words the older holds (``_led_apart``,
    ``_leaves_subject``). A fact that says it adds ("There's also a second
    staging box …") revises nothing. Words and values are read only as far as a pair gets:
    most pairs are settled before, and a long memory's words cost a pass over its text. A
    question ("Should we move the prod db to us-west-2?") states nothing to revise with."""
    if not states_something(newer):
        return False
    new_words, old_words = words_of(newer), words_of(older)
    if says_it_adds(newer, new_words, old_words):
        return False
    if _same_subject(new_words, old_words):
        return True
    shared_content = _same_content(new_words, old_words)
    # The question's words each holds, read between two facts only.
    held_new, held_old = (
        asked
        if asked is not None and is_a_fact(new_words) and is_a_fact(old_words)
        else (frozenset(), frozenset())
    )
    # The newer holds none the older lacks; or every one the older holds.
    asked_alike = bool(held_new) and held_new <= held_old
    covers = bool(held_old) and held_old <= held_new
    # The words settle most pairs; only the rest pay for reading the values.
    if not (shared_content or asked_alike or covers):
        return False
    new_values, old_values = values_of(newer), values_of(older)
    if new_values == old_values:
        return asked_alike and _led_apart(newer, older) and not _leaves_subject(newer, older, asked)
    return shared_content or (covers and bool(new_values - old_values))


def _leaves_subject(
    newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]] | None
) -> bool:
    """Whether ``newer`` leaves unsaid a word of the question that names what ``older`` is
    about (``leaves_asked_subject``): "Kenji is the billing service owner." only rewords the
    "owns" of "Marta owns the billing service."; "Felix is the reviewer for frontend changes."
    says "frontend changes" where "Ana reviews all database migrations." says what the
    question asks about."""
    if asked is None:
        return False
    return leaves_asked_subject(wording_of(newer), wording_of(older), asked[1] - asked[0])


def _led_apart(newer: str, older: str) -> bool:
    """Whether two facts, neither a labelled chat turn, each open with a capitalised word the
    other does not say ("Ana reviews all database migrations." / "Felix is the reviewer for
    database migrations."). A sentence's first word is capitalised whatever it is, so no rule
    reads it as a name; between two facts that hold the same words of the question it is the
    one word left to answer it with."""
    if speaker(newer) is not None or speaker(older) is not None:
        return False  # a turn opens with small talk as often as with what it is about
    opening_new, opening_old = _opening(newer), _opening(older)
    return (
        opening_new is not None
        and opening_old is not None
        and opening_new not in words_of(older)
        and opening_old not in words_of(newer)
    )


def _opening(content: str) -> str | None:
    """The first word of ``content`` lower-cased, when it is capitalised and no stop word."""
    first = content.split(maxsplit=1)[0].strip(".,;:!?'\"()") if content.strip() else ""
    if not first[:1].isupper() or first.lower() in STOP_WORDS:
        return None
    return first.lower()


def _same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    union = len(a | b)
    return bool(union) and len(a & b) / union >= DEDUP_MIN_WORD_OVERLAP


def _same_content(a: frozenset[str], b: frozenset[str]) -> bool:
    a, b = a - STOP_WORDS, b - STOP_WORDS
    union = len(a | b)
    return bool(union) and len(a & b) / union >= REVISION_CONTENT_OVERLAP
