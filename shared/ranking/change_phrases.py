"""Phrases by which English says that something changed, read as the one-word change mark
that says it (``shared.ranking.wording``): "went up to $15" says what "increased to $15" does,
"these days" what "nowadays" does (pure)."""

from __future__ import annotations

import re
from typing import Final, NamedTuple


class _ChangePhrase(NamedTuple):
    """A phrase by which English says that something changed, read as the change mark that
    says it in one word: "went up to $15" says what "increased to $15" does, and the "days" of
    "these days" is no content of the fact. The pattern is tried only on a text that holds one
    word of each cue (a set lookup, where a pattern costs a pass over a long message)."""

    mark: str
    first_cue: frozenset[str]
    other_cues: tuple[frozenset[str], ...]
    pattern: re.Pattern[str]


def _phrase(mark: str, cues: str, pattern: str) -> _ChangePhrase:
    """``cues``: the words of each cue, "|" between a cue's words and a space between cues;
    the first cue is the one most texts lack, since most texts are read no further."""
    first, *others = (frozenset(cue.split("|")) for cue in cues.split())
    return _ChangePhrase(mark, first, tuple(others), re.compile(pattern, re.IGNORECASE))


# A rise or a cut is one only towards a figure, in digits or in words ("cut to a single open
# req"; "went up to the mountains" is a trip), and a "from" or an "as of" says since when only
# before a time ("as of my training data", "photos from this trip" say nothing changed).
_COUNTED_IN_WORDS: Final = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|a single|a dozen|half"
)
_TO_A_FIGURE: Final = rf"(?= (?:to|by) (?:[$€£]?\d|(?:{_COUNTED_IN_WORDS})\b))"
_PERIODS: Final = "week|month|quarter|year|sprint|release|cycle|season|semester"
_DATES: Final = (
    "today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february"
    "|march|april|may|june|july|august|september|october|november|december"
)
_TIMES_OF_DAY: Final = "morning|afternoon|evening|tonight|yesterday"
# Nouns of a change that are not themselves change marks ("move", "upgrade", "switch" are).
_CHANGE_EVENTS: Final = (
    "migration|rebrand|reorg|restructure|restructuring|cutover|switchover|merger|acquisition"
    "|relaunch|redesign|renegotiation"
)
_CHANGE_PHRASES: Final = (
    _phrase("increased", "up went|gone|goes|go", rf"\b(?:went|gone|goes|go) up{_TO_A_FIGURE}"),
    _phrase("decreased", "down went|gone|goes|go", rf"\b(?:went|gone|goes|go) down{_TO_A_FIGURE}"),
    # "The quota was cut to 10 GB", and said of what was cut: "Finance cut the budget to $32k".
    _phrase(
        "reduced",
        "cut|cuts",
        rf"\b(?:(?:was|were|got|been) )?cuts?\b(?=(?: [^\s,;.!?]+){{0,4}}{_TO_A_FIGURE})",
    ),
    # Said of what was brought down: "renegotiated Datadog down to $71,500".
    _phrase("decreased", "down", rf"\bdown(?= to (?:[$€£]?\d|(?:{_COUNTED_IN_WORDS})\b))"),
    _phrase("postponed", "pushed back|out", r"\bpushed (?:back|out)\b"),
    # "brought forward to the 9th"; "moved forward" alone is progress ("moved forward with it").
    _phrase(
        "rescheduled",
        "forward brought|moved|pulled",
        r"\bbrought forward\b|\b(?:moved|pulled) forward(?= (?:to|by)\b)",
    ),
    # A change named as an event: "lives in PostgreSQL after the migration", "green since the
    # rebrand". The event's noun says only that something changed.
    _phrase(
        "since ",
        f"{_CHANGE_EVENTS} after|since|following",
        rf"\b(?:after|since|following) the (?:{_CHANGE_EVENTS})\b",
    ),
    # A cutover: "we cut the static assets over to Fastly".
    _phrase("moved", "over cut|cuts", r"\bcuts?\b(?=(?: [^\s,;.!?]+){0,4} over to\b)"),
    _phrase("nowadays", "these days", r"\bthese days\b"),
    _phrase("now", "forward going", r"\bgoing forward\b"),
    _phrase(
        "since ",
        f"{_PERIODS} this|next from|starting|as",
        rf"\b(?:from|starting|as of) (?=(?:this|next) (?:{_PERIODS})\b)",
    ),
    _phrase("since ", f"{_DATES} starting|as", rf"\b(?:starting|as of) (?=(?:{_DATES})\b)"),
    _phrase(
        "since ",
        f"{_TIMES_OF_DAY} starting|as",
        rf"\b(?:starting|as of) (?=(?:(?:this|yesterday|tomorrow) )?(?:{_TIMES_OF_DAY})\b)",
    ),
)


def phrases_as_marks(text: str, words: frozenset[str]) -> str:
    """``text`` with each change phrase it holds written as its mark; ``words``: its words,
    lower-cased, for the cue lookups."""
    for phrase in _CHANGE_PHRASES:
        if phrase.first_cue.isdisjoint(words):
            continue  # most texts: one lookup, no more
        if all(not cue.isdisjoint(words) for cue in phrase.other_cues):
            text = phrase.pattern.sub(phrase.mark, text)
    return text
