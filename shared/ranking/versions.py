"""Where memories no link joins stand: of two on the same subject, the newer is put first
when nearly as relevant, when it is a short note that the older fact changed, or when it gives,
in other words, a figure of the same measure in place of the older's (in a chat message, in the
sentence that answers the question), within a short reach (``newer_first``). Two short facts
that share only a name are on the same subject when they tell the same relation of it
(``shared.ranking.relations``). Memories a link joins are placed by ``shared.ranking.linked``
(pure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.model import Memory
from shared.model.tokens import STOP_WORDS
from shared.ranking.asked_subject import in_place_of, leaves_asked_subject
from shared.ranking.figures import answers_with_another_figure
from shared.ranking.measures import measured_outright, swapped_in_kind
from shared.ranking.memory_readings import (
    is_a_fact,
    one_fact_of,
    plain_terms_of,
    says_it_adds,
    wording_of,
    words_of,
)
from shared.ranking.other_times import of_another_time
from shared.ranking.relations import RelationReader, shared_names, shares_only_a_name
from shared.ranking.revises import revises
from shared.ranking.values import is_figure, is_value, value_kind
from shared.ranking.wording import (
    CHANGE_MARKS,
    Wording,
    is_one_sentence,
    states_something,
)

# How far below an older memory's score, in units of the floor, a newer one on the same subject
# may stand and still be put first (see newer_first).
REVISION_BAND: Final = 0.5
# How many places a newer memory may move up past what it revises (see newer_first). Unbounded,
# a newer message from ranks 6-10 of a wider list jumps into the first five over memories more
# relevant than itself; two places keep the knowledge updates first at little cost, one loses
# some of them (docs/benchmarks.md, "Newer-first").
REVISION_REACH: Final = 2


def newer_first(
    order: list[int],
    memories: Sequence[Memory],
    scores: Sequence[float],
    names_held: Sequence[int],
    *,
    band: float,
    reach: int = REVISION_REACH,
    matched: Sequence[frozenset[str]] | None = None,
    relations: RelationReader | None = None,
) -> list[int]:
    """Among the results, move each memory ahead of an older one it probably revises
    (``revises``; ``matched``: each result's matched query terms) when it is nearly as
    relevant (its score at most ``band`` below), or that it notes a change of however much
    less relevant (``_notes_a_change``), and when it holds as many of the query's names
    (``names_held``: how many each result holds whole): a revision outranks what it revises,
    but a merely newer memory never outranks a clearly better one. It reorders what the other
    rules returned and never brings in another memory: pulling newer memories in from below the
    cut lowered recall on the long chats (docs/benchmarks.md), on pairs of messages that share
    words without one revising the other. Nor does it move a memory up more than ``reach``
    places: each memory it would pass is more relevant than it.

    Two facts that share only a name (``relations``: how the model reads what each says of
    it) are versions of one fact when they tell the same relation: the newer goes first however
    much less relevant, as a note of a change does, and, when the question names what they
    share, from wherever it stands among the results: what it passes are other facts of that
    name, less to the question than its current value. When they tell two, the newer is another
    fact of the same person or thing and goes first only as a note that the older changed.

    A fact that holds the same words of the question as the older and gives a figure of the
    same measure in place of the older's answers it anew (``_answers_anew``), and goes first
    however much less relevant too; so does a longer text, a chat message, whose sentence
    answering the question gives another value of the figure the older's gives
    (``_answers_with_another_figure``)."""
    placed: list[int] = []
    for i in order:
        position = len(placed)
        for j in range(len(placed) - 1, -1, -1):
            older = placed[j]
            if memories[i].created_at <= memories[older].created_at:
                continue
            if names_held[i] < names_held[older]:
                continue
            newer, was = memories[i].content, memories[older].content
            asked = (matched[i], matched[older]) if matched is not None else None
            if len(placed) - j > reach:
                # Past the reach, only a version of what the question names moves up.
                moves = _relation_alike(newer, was, relations, asked, named_only=True)
                if moves and not _of_another_time(newer, was):
                    position = j
                continue
            near = scores[i] >= scores[older] - band
            ahead = _goes_ahead(newer, was, asked, relations, near=near)
            if ahead and not _of_another_time(newer, was):
                position = j
        placed.insert(position, i)
    return placed


def _goes_ahead(
    newer: str,
    older: str,
    asked: tuple[frozenset[str], frozenset[str]] | None,
    relations: RelationReader | None,
    *,
    near: bool,
) -> bool:
    """Whether ``newer``, within the reach of ``older``, goes ahead of it: a version of the same
    relation, a revision when ``near`` (nearly as relevant), or, however much less relevant, a
    note of a change or another answer to the question (in a fact's words or a chat message's
    figure)."""
    revision = _relation_alike(newer, older, relations, asked)
    if revision is None:
        revision = near and revises(newer, older, asked)
    return (
        revision
        or _notes_a_change(newer, older, asked)
        or _answers_anew(newer, older, asked)
        or _answers_with_another_figure(newer, older, asked)
    )


def _answers_with_another_figure(
    newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]] | None
) -> bool:
    """Whether ``newer``, a text longer than a fact of a sentence, answers the question with a
    figure in place of the older's (``answers_with_another_figure``), however much less
    relevant: a chat message that revises a figure rewords all around it."""
    if asked is None or one_fact_of(newer) or one_fact_of(older):
        return False
    return answers_with_another_figure(newer, older, asked)


def _relation_alike(
    newer: str,
    older: str,
    relations: RelationReader | None,
    asked: tuple[frozenset[str], frozenset[str]] | None,
    *,
    named_only: bool = False,
) -> bool | None:
    """Whether two facts of a sentence each that share only a name tell the same relation of it;
    None for any other pair, or while ``relations`` has not read the two yet. ``asked``: the
    query terms each matched, whence whether the question names what they share; with
    ``named_only``, None for a pair whose shared name it does not."""
    if relations is None or not (one_fact_of(newer) and one_fact_of(older)):
        return None
    if not shares_only_a_name(newer, older):
        return None
    named = asked is not None and shared_names(newer, older) <= asked[0] & asked[1]
    if named_only and not named:
        return None
    return relations.alike(newer, older, named=named)


def _of_another_time(newer: str, older: str) -> bool:
    """Whether ``newer``, a fact, says what was so before, may be so one day or is so once
    (``shared.ranking.other_times``): no newer version of ``older``, whatever words they
    share. A chat turn's "maybe" or "before" is of its own moment, and is not read."""
    return is_a_fact(words_of(newer)) and of_another_time(newer, older)


def _notes_a_change(
    newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]] | None
) -> bool:
    """Whether ``newer`` is a short note that the older fact changed, however much less
    relevant: a fact of one sentence that says something changed or reports an action ("Log
    retention got cut to 14 days.", "we tightened checkout p99 to 500ms"), holding no word of
    the question (``asked``: the newer's matched terms, then the older's) the older does not
    hold, and answering it anew. The question is asked in the older's words, which a terse note
    of the change rewords, so relevance cannot order the two (no band holds them).

    Answering anew is giving a value in place of one of the older's of its kind ("800ms" →
    "500ms", Tom → Aisha), or holding a plain word of the question ("standup's at 10 now" for
    "what time is standup"; "orders api takes bearer tokens now" for "what auth header does the
    orders api want?") without saying a word of it the older holds with another word in its
    place (``in_place_of``). A note that shares only the name of whom the question asks about
    may tell another attribute of theirs ("Ximena Cruz's favourite colour is now white." for
    "What does Ximena Cruz work as?"; "Tara Walsh's favourite food is now pho." for "What is
    Tara Walsh's favourite colour?"), and a value of another kind in place of the older's tells
    one ("We skipped the code freeze for the 4.2 hotfix." after "code freeze starts the Friday
    before each release")."""
    if asked is None or not asked[0] or not asked[0] <= asked[1]:
        return False
    new_words, old_words = words_of(newer), words_of(older)
    if not (is_a_fact(new_words) and is_a_fact(old_words)) or says_it_adds(
        newer, new_words, old_words
    ):
        return False
    # One sentence each: a chat turn of a few words says "now" or "since" of its moment, and
    # "new" of anything ("I've always liked turtles since I was a boy.").
    if not (is_one_sentence(newer) and is_one_sentence(older) and states_something(newer)):
        return False
    note = wording_of(newer)
    acted = note.reported_action() is not None
    # Without a change mark of its own or an action reported, the note announces nothing
    # whatever the older says, which need not be read.
    if not (acted or note.words & CHANGE_MARKS):
        return False
    was = wording_of(older)
    if not (acted or note.announces(was)):
        return False
    gone, came = was.values - note.values, note.values - was.values
    if swapped_in_kind(was, gone, note, came, value_kind):
        return True
    if (gone and came) or not asked[0] & plain_terms_of(newer):
        return False
    # A word of the question only the older holds may be what the question asks about, but
    # one said in the older's own sentence with another word in its place names another
    # attribute ("Tara Walsh's favourite food is now pho." for "… favourite colour?").
    return asked[0] == asked[1] or not in_place_of(note, was, asked[1] - asked[0])


def _answers_anew(
    newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]] | None
) -> bool:
    """Whether ``newer`` answers the question anew in other words, however much less relevant:
    two facts of a sentence each, the newer holding words of the question the older holds and
    no other (``asked``: the newer's matched terms, then the older's), giving, in place of a
    figure of the older, one that measures the same as its words tell ("Standup is at 9:30." →
    "We meet for standup at 10:15."; "… kept in Loki for 30 days." → "… purges anything older
    than 14 days."; "Nightly backups run at 2am UTC." → "The nightly backup job kicks off at
    4am UTC." for "when do backups run"). A reworded fact does not say it changed, and its
    relevance falls outside the band. A name for a name is not enough: "The backend runs on
    Python 3.10." and "The backend is monitored by Grafana." answer two questions of the
    backend. Nor is a figure whose words tell only what it counts or the word before it
    (``measured_outright``), nor a fact of a kind of the older's subject
    (``_narrows_subject``), nor one that leaves out a word of the question that names the
    older's subject (``leaves_asked_subject``)."""
    if asked is None or not asked[0] or not asked[0] <= asked[1]:
        return False
    if not (one_fact_of(newer) and one_fact_of(older)):
        return False
    new_words, old_words = words_of(newer), words_of(older)
    if says_it_adds(newer, new_words, old_words):
        return False
    note, was = wording_of(newer), wording_of(older)
    gone = [v for v in was.values - note.values if _a_measured_figure(was, v)]
    came = [v for v in note.values - was.values if _a_measured_figure(note, v)]
    # The figures settle most pairs; only those left are read for their subjects.
    return (
        swapped_in_kind(was, gone, note, came, value_kind)
        and not _narrows_subject(note, was)
        and not leaves_asked_subject(note, was, asked[1] - asked[0])
    )


def _a_measured_figure(wording: Wording, value: str) -> bool:
    """Whether ``value`` is a figure that carries what it measures: a word of a name read after
    another ("World Health Organization", "Ali Hassan") may read as a version, and is none."""
    return is_figure(value) and measured_outright(wording, value)


def _narrows_subject(newer: Wording, older: Wording) -> bool:
    """Whether ``newer`` says a word of its own right before the older's subject: a kind of
    it, another subject in the same words ("Audit logs are kept for 7 years." after "Logs are
    kept for 30 days.")."""
    subject = older.subject()
    if subject is None or subject not in newer.spaced:
        return False
    at = newer.spaced.index(subject)
    before = newer.spaced[at - 1] if at > 0 else None
    return (
        before is not None
        and before not in older.distinct
        and before not in STOP_WORDS
        and not is_value(before)
    )
