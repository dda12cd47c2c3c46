"""A figure restated: a text that gives another measure of what an older one measured
("currently uses around 250MB of peak memory" → "currently averaging around 140MB per session"),
in words the rules of ``shared.ranking.updates`` cannot match (pure). Remember asks the model
whether two such sentences say the same thing (``FigureCheck``, ``restated``); recall, which
knows the question, reads the two sentences that answer it (``answers_with_another_figure``).

A chat message that revises a figure rewords everything around it: the words two such
sentences share are too few for the word rules, and a looser word rule linked sentences about
other things as often as revisions (docs/calibration.md). What the words do tell is where to
look: a sentence of the newer text and one of the older holding a figure of the same kind (a
size, a duration, a percentage, a score out of some total, a date) with another value, each
value one the other text does not hold, within a factor of ``MAX_RATIO`` of each other (a
figure revised stays near what it was; "30 seconds" against "12 hours" measures two things),
between texts of a chat sentence or two (at least ``MIN_TERMS`` content words, neither of them
long: a long text is never linked) that share a quarter of their content words (as long texts
must for the word rules), unless the two clauses name apart what they
measure ("the frontend Docker build" / "the backend Docker build":
``shared.ranking.figure_reading``). Whether the two sentences say the same thing is
for a model to tell: ``restated`` takes the cosine of their embeddings, which the caller
computes (only for the few pairs found here).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from shared.model import Hit, Scope
from shared.model.tokens import terms
from shared.ranking.figure_reading import Figure, figure_sentences, named_apart, saying
from shared.ranking.other_times import sentence_of_another_time
from shared.ranking.updates import long_texts_share
from shared.ranking.wording import Wording

# The cosine between the embeddings of two sentences above which they restate one figure: the
# generator's distractors (another subject, another attribute of the same subject) stay below
# 0.65 and the clearest revisions in chat words reach it; at 0.7 a whole chat remembered in order
# gained 170 links, enough worked examples among them to cost recall@5 (docs/calibration.md).
RESTATED_COSINE: Final = 0.8
# How far apart two values of one figure may be (the larger over the smaller): a chat that
# revises a figure often reports a fix five to ten times better ("3 hours" → "40 minutes",
# "1.2GB" → "240MB"); "30 seconds" and "15 minutes" of one subject are two attributes.
MAX_RATIO: Final = 10.0
# The fewest content words of a text read for figures: a chat sentence. A short fact
# (a handful of words) is left to the word rules, which read it whole, and costs no embedding.
MIN_TERMS: Final = 16
# How many of the question's terms a sentence holds to be read as answering it (see
# answers_with_another_figure).
ASKED_IN_SENTENCE: Final = 2
# How many texts' figure sentences recall keeps read.
_READ_TEXTS: Final = 256
# How many sentence pairs of one older text are looked at (each costs an embedding).
MAX_PAIRS: Final = 4


def _near(a: Figure, b: Figure) -> bool:
    if a[0] == "date":
        return abs(a[1] - b[1]) <= 372  # dates within about a year
    low, high = sorted((a[1], b[1]))
    return low > 0 and high / low <= MAX_RATIO


class FigureCheck:
    """One newer text, read once, checked against any number of older ones."""

    __slots__ = ("_newer", "_sentences")

    def __init__(self, new: str) -> None:
        # The figures first: most texts give none, and then their words are never read.
        self._sentences = figure_sentences(new)
        self._newer = Wording(new) if self._sentences else None
        if self._newer is not None and not _read_whole(self._newer):
            self._sentences = []

    def pairs(self, old: str) -> list[tuple[str, str]]:
        """(newer, older) readings of two sentences that may restate one figure with another
        value, at most ``MAX_PAIRS``; none between texts shorter than ``MIN_TERMS`` content
        words, long texts, or texts sharing less than a quarter of them. A clause that says it
        adds ("also", "as well") restates nothing, nor one said of another time than now."""
        if not self._sentences or self._newer is None:
            return []
        olds = figure_sentences(old)
        if not olds:
            return []
        older = Wording(old)
        if not _read_whole(older) or not long_texts_share(self._newer, older):
            return []
        said_old = frozenset().union(*(held for _, held in olds))
        said_new = frozenset().union(*(held for _, held in self._sentences))
        found: list[tuple[str, str]] = []
        for readings, held in self._sentences:
            came = held - said_old
            for readings_before, held_before in olds:
                if not _another_value(readings, came, readings_before, held_before - said_new):
                    continue
                # Read alike: whole against whole, the figure's clause against the other's.
                whole = (readings[0], readings_before[0])
                for pair in dict.fromkeys((whole, (readings[-1], readings_before[-1]))):
                    found.append(pair)
                    if len(found) == MAX_PAIRS:
                        return found
        return found


def _read_whole(wording: Wording) -> bool:
    """A chat sentence or two: at least ``MIN_TERMS`` content words, and not long (a long text
    is never linked: ``shared.ranking.updates.first_updated``)."""
    return len(wording.distinct) >= MIN_TERMS and not wording.long


def _another_value(
    readings: tuple[str, ...],
    came: frozenset[Figure],
    readings_before: tuple[str, ...],
    gone: frozenset[Figure],
) -> bool:
    """Whether a sentence (``readings``) gives, among the figures only its text gives
    (``came``), another value of one the older sentence's text alone gave (``gone``), near it,
    neither adding to it ("also", "as well") nor saying it of another time ("Back in 2021, the
    cache expired after 5 minutes.")."""
    if not any(a[0] == b[0] and _near(a, b) for a in came for b in gone):
        return False
    if named_apart(readings[-1], readings_before[-1]):
        return False
    if Wording(readings[-1]).adds_to(Wording(readings_before[-1])):
        return False
    return not sentence_of_another_time(readings[0], readings_before[0])


class _Answering(NamedTuple):
    """A sentence of a text that gives a figure, as recall reads it for a question."""

    readings: tuple[str, ...]  # whole, then up to its figure's clause (figure_sentences)
    terms: frozenset[str]  # the keyword terms of the whole sentence
    # Those of the sentence up to the end of its figure's clause: what the figure is said of
    # ("On the derivatives quiz I scored 17/20", not "…, which felt easier than limits").
    clause_terms: frozenset[str]
    figures: frozenset[Figure]
    # The terms of the words right before its figures: the verbs that give them.
    saying: frozenset[str]


def answers_with_another_figure(
    newer: str, older: str, asked: tuple[frozenset[str], frozenset[str]]
) -> bool:
    """Whether a sentence of ``newer`` and one of ``older`` that hold the same words of the
    question (at least ``ASKED_IN_SENTENCE``; ``asked``: the terms each text matched) give
    figures of one kind with another value, near each other, each value one the other text does
    not give: the newer answers the question with a figure that replaces the older's ("I ran
    pytest-cov on the payments module and coverage is only 58%" → "With the new refund tests
    in place, coverage on the payments module is now at 83%." for "What is the test coverage of
    the payments module?"). The question tells which sentences answer it, so unlike
    ``FigureCheck`` no model needs to read them.

    The newer's sentence, up to the end of its figure's clause, holds every word of the
    question the older's sentence holds, bar the verb that gives the older's figure ("takes
    about 14 minutes to run" → "is down to roughly 6 minutes per run"): one that leaves out
    another word ("graphing quiz score" for "proof writing quiz score", "the notifications
    module" for "the payments module") may tell of another thing measured alike. A clause that
    says it adds restates nothing, nor one said of another time than now."""
    if len(asked[0] & asked[1]) < ASKED_IN_SENTENCE:
        return False
    news = _answering(newer, asked[0])
    olds = _answering(older, asked[1]) if news else []
    if not olds:
        return False
    said_new, said_old = _figures_said(newer), _figures_said(older)
    for now in news:
        came = now.figures - said_old
        for was in olds:
            held = was.terms & asked[1]
            left_out, shared = held - now.clause_terms, held & now.clause_terms
            if len(shared) < ASKED_IN_SENTENCE or len(left_out) > 1 or not left_out <= was.saying:
                continue
            if _another_value(now.readings, came, was.readings, was.figures - said_new):
                return True
    return False


def _answering(text: str, asked: frozenset[str]) -> list[_Answering]:
    """The sentences of ``text`` giving a figure that hold ``ASKED_IN_SENTENCE`` or more of the
    ``asked`` terms."""
    return [read for read in _figures_read(text) if len(asked & read.terms) >= ASKED_IN_SENTENCE]


# Recall reads the same few results question after question: each text is read once.
@functools.lru_cache(maxsize=_READ_TEXTS)
def _figures_read(text: str) -> tuple[_Answering, ...]:
    """The sentences of ``text`` that state a figure: one asked ("Should I raise the limit to
    2GB?") states none."""
    return tuple(
        _Answering(
            readings,
            frozenset(terms(readings[0])),
            frozenset(terms(readings[-1])),
            held,
            saying(readings[0]),
        )
        for readings, held in figure_sentences(text)
        if not readings[0].rstrip().endswith("?")
    )


def _figures_said(text: str) -> frozenset[Figure]:
    return frozenset().union(*(read.figures for read in _figures_read(text)))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def restated(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether two sentences, by their embeddings, say the same thing."""
    return cosine(a, b) >= RESTATED_COSINE


def figure_candidates(
    content: str, visible: Sequence[Hit], *, scope: Scope
) -> list[tuple[Hit, list[tuple[str, str]]]]:
    """The visible memories ``content`` may restate a figure of (nearest first, a note never
    standing in for a project memory, as ``probably_updated``), each with the sentence pairs
    whose embeddings tell."""
    check = FigureCheck(content)
    found = []
    for hit in sorted(visible, key=lambda hit: hit.similarity, reverse=True):
        if scope == "conversation" and hit.memory.scope == "project":
            continue
        pairs = check.pairs(hit.memory.content)
        if pairs:
            found.append((hit, pairs))
    return found


def first_restated(
    candidates: Sequence[tuple[Hit, Sequence[tuple[str, str]]]],
    vectors: Mapping[str, Sequence[float]],
) -> Hit | None:
    """The nearest candidate one of whose sentence pairs says the same thing (``vectors``: each
    sentence's embedding), or None."""
    for hit, pairs in candidates:
        if any(restated(vectors[new], vectors[old]) for new, old in pairs):
            return hit
    return None
