"""What a newer text says it left of an older one: "… from X to …", "dropped X", "X was
retired", ", not X", "X left", "renamed X to …" (``shared.ranking.updates``). Such a text
announces the change itself and may reword everything else (pure)."""

from __future__ import annotations

import re
from typing import Final

from shared.model.tokens import STOP_WORDS, indexed_form
from shared.ranking.wording import CHANGE_TERMS, Wording

# The value a newer text says it left: "from X to", "from X and Y to".
_FROM_TO: Final = re.compile(r"\bfrom ([\w.\-/]+)(?: (?:and|or) [\w.\-/]+)? to\b")
# The name a newer text says it dropped: "dropped X", "stopped using X", "instead of X", "X was
# retired". Only a value the older text names (a name, a version, an identifier) counts: the
# verbs also stand alone ("she retired a long time ago"). Each word list is written once; the
# patterns and the substring test that skips them are made from it.
_DROPPING: Final = (
    "dropped",
    "replaced",
    "retired",
    "removed",
    "ditched",
    "abandoned",
    "instead of",
    "stopped using",
    "moved off",
    "moved away from",
    "got rid of",
)
_DROPPED_AS: Final = (
    "dropped",
    "retired",
    "removed",
    "replaced",
    "deprecated",
    "decommissioned",
    "archived",
    "sunset",
    "shut down",
    "shut off",
    "turned off",
    "switched off",
    "phased out",
    "closed",
    "read-only",
    "gone",
    # Out for good, not for a while ("Aiko is out on vacation until the 14th").
    r"out(?! (?:on|sick|today|until|till|for|of|this|next)\b)",
)
# How a text says what happens to a name it left: "X was retired", "X gets shut down", "X's
# being archived", "X's been decommissioned".
_BEING: Final = (
    "(?:'s)?(?: account| contract| subscription| instance)?"
    " (?:was|is|are|has been|have been|got|gets|is being|are being|been|being)"
)
# A person who left: "Anika left; the QA lead is Pavel.", "Lena has left Northwind".
_LEFT_CUES: Final = frozenset({"left", "quit", "resigned"})
_LEFT: Final = re.compile(rf"([\w.\-]+)(?: has| had)? (?:{'|'.join(_LEFT_CUES)})\b")
# A service or a tool left when its contract ends: "Datadog contract ended", "Auth0's
# contract expired".
_CONTRACT_ENDED: Final = "contract (?:ended|expired|lapsed|ran out)"
# A correction names what it corrects after a comma: "… is 2 seconds, not 5", "… go to
# #ops-pager, not #alerts-prod". One that names alternatives ("works with sqlite_vec, not
# hybrid or cloudflare") rules them out of what it says, and corrects none of them.
_CORRECTED: Final = ", not "
# The first word of each of those phrases: a text that holds none of them is read no further
# (a set lookup, where the patterns are tried at every place of the text).
_DROPPED_CUES: Final = frozenset(
    re.split(r"\W", phrase)[0] for phrase in (*_DROPPING, *_DROPPED_AS, "contract")
)
_DROPPED: Final = (
    re.compile(rf"\b(?:{'|'.join(_DROPPING)}) (?:the |our )?([\w.\-/#@]+)"),
    re.compile(rf"([\w.\-/#@]+){_BEING} (?:{'|'.join(_DROPPED_AS)})(?![\w-])"),
    re.compile(rf"([\w.\-/#@]+)(?:'s)? {_CONTRACT_ENDED}\b"),
    re.compile(rf"{_CORRECTED}(?:the |our )?([\w.\-/#@]+)(?![\w.\-/#@]| or | nor |, )"),
)


# The thing a newer text says it replaced, renamed or converted, named by a plain word of the
# older's ("replaced our hand-rolled nginx LB with an AWS ALB", "Renamed master to main", "We
# converted the old unittest suites"): a tool or a branch written in lower case is no value.
_REPLACED_WORDS: Final = re.compile(
    r"\b(?:replaced|swapped out) (?:the |our |a |an )?((?:[\w.\-/#@]+ ){0,3}[\w.\-/#@]+) with\b"
    r"|\brenamed (?:the |our )?([\w.\-/#@]+) to\b"
    r"|\bconverted (?:the |our |all )?(?:old |existing )?([\w.\-/#@]+)"
)
_REPLACED_CUES: Final = frozenset({"replaced", "swapped", "renamed", "converted"})


def left_value(newer: Wording, older: Wording) -> str | None:
    """The term of the older text that the newer says it left ("we switched the frontend from
    Axios to fetch", "migrated the tests from Mocha and Chai to Vitest", "we dropped SQLAlchemy
    and use plain asyncpg queries", "Jenkins was retired"), or None."""
    return _moved_from(newer, older) or dropped_value(newer, older)


def _moved_from(newer: Wording, older: Wording) -> str | None:
    # A substring test first: the pattern is tried at every place of the text.
    if "from " not in newer.lowered:
        return None
    for match in _FROM_TO.finditer(newer.lowered):
        was = indexed_form(match.group(1))
        if was in older.distinct and was not in CHANGE_TERMS:
            return was
    return None


def dropped_value(newer: Wording, older: Wording) -> str | None:
    """The value of the older text (a name, a version, an identifier) that the newer says it
    dropped or corrected ("we dropped SQLAlchemy", "Jira's being archived", ", not 30"), or
    the person it names who left (``_person_left``), or None. Unlike "from X to", which also
    tells a route ("goes from Oslo to Bergen"), these say that the older's value is no longer
    so."""
    lowered = newer.lowered
    if newer.words.isdisjoint(_DROPPED_CUES) and _CORRECTED not in lowered:
        return _person_left(newer, older)
    for pattern in _DROPPED:
        for match in pattern.finditer(lowered):
            # Read lower-cased, a name loses its capitals: "sqlalchemy" is the older text's
            # value, though the term read from "SQLAlchemy" is not this word's stem.
            word = match.group(1).rstrip(".-/").lstrip("#@")
            was = word if word in older.values else indexed_form(word)
            if was in older.values:
                return was
    return _person_left(newer, older)


def _person_left(newer: Wording, older: Wording) -> str | None:
    """The name of the older text whom the newer says left ("Anika left; the QA lead is
    Pavel."), where the newer says again something else the older does, besides its values:
    the role they left. Someone who left a meeting early ("Anika left the standup early") still
    holds it."""
    if newer.words.isdisjoint(_LEFT_CUES):
        return None
    restated = newer.distinct & older.distinct - older.values
    if not restated:
        return None
    for match in _LEFT.finditer(newer.lowered):
        word = match.group(1).rstrip(".-")
        was = word if word in older.values else indexed_form(word)
        if was in older.values:
            return was
    return None


def word_replaced(newer: Wording, older: Wording) -> str | None:
    """The plain word of the older text, past its subject, that the newer says it replaced,
    renamed or converted ("Renamed master to main" after "Default branch is master."), or
    None. The word is never what the older is about (its first content word, its subject):
    a thing renamed is still the thing the older's fact is of."""
    if newer.words.isdisjoint(_REPLACED_CUES):
        return None
    subject = older.subject()
    past_subject = frozenset(older.terms[1:]) - {subject} - STOP_WORDS
    for match in _REPLACED_WORDS.finditer(newer.lowered):
        said = next(group for group in match.groups() if group is not None)
        for word in said.split():
            was = indexed_form(word.rstrip(".-/"))
            if was in past_subject:
                return was
    return None
