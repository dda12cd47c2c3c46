"""Does a fact speak of another time than now: what was so before ("Before Sam, billing was
owned by Rita."), what may be so one day ("We might look at upgrading prod to Postgres 16 next
year."), or what is so once ("This week only, design review is in Cedar")? Such a fact is
written later than the one it names, but it does not say what is so now, so it updates nothing
and is no newer version to put first (``shared.ranking.updates``, ``shared.ranking.figures``,
``shared.ranking.versions``) (pure).

A change reported in the past tense is still a change ("We moved to Linear last week."): only
the words that set a statement in another time count, not the tense of its verb; and a fact
that also says what is so now ("We used to deploy with Jenkins; it's GitHub Actions now.")
states the present. A short fact is read whole. A sentence of a longer text is read by its
opening alone ("Back in 2021, …", "Maybe next quarter …"): a chat sentence says "might" and
"maybe" of its own clauses ("… at 2:00 AM, but I'm not sure how to handle errors that might
occur"), not of what it states.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from shared.ranking.wording import CHANGE_MARKS, lowered

# What was so before, said first ("Before Mei, …", "Back in 2021 …") or as a habit left ("We
# used to …"). Inside a sentence "previously" and "formerly" name the value a change replaced
# ("The API listens on 9090 (previously 8080)."), which is an update.
_BEFORE_OPENING: Final = r"^(?:before|back in|prior to|previously|formerly|originally)\b"
_BEFORE: Final = re.compile(rf"{_BEFORE_OPENING}|\bused to\b")
# What may be so one day: a plan, a wish, a question put to the team.
_MAYBE: Final = (
    r"\b(?:might|maybe|perhaps|could we|should we|thinking about|thinking of"
    r"|on the roadmap|at some point|nothing decided|nothing is decided|not decided"
    r"|plan to|planning to|would like to)\b"
)
# What is so once: an exception to what stays so ("Last Monday's sprint planning got pushed").
_ONCE: Final = r"\b(?:this week only|just this week|just this once|one-off|one off)\b|^last \w+'s\b"
_MAYBE_OR_ONCE: Final = re.compile(f"{_MAYBE}|{_ONCE}")
# The same, as a sentence of a longer text opens on them.
_MAYBE_OR_ONCE_OPENING: Final = re.compile(
    r"^(?:maybe|perhaps|could we|should we|(?:we|i) might|this week only|just this week"
    r"|just this once|last \w+'s)\b"
)
_BEFORE_AS_OPENING: Final = re.compile(_BEFORE_OPENING)
# A text that also says what is so now states the present, whatever it recalls or plans
# beside it: "We used to deploy with Jenkins; it's GitHub Actions now.", "The standup is at
# 10 now, previously 9."
_NOW: Final = re.compile(
    r"\b(?:now|currently|nowadays|these days|any ?more|no longer|from now on|going forward)\b"
)
_WORD: Final = re.compile(r"[a-z]+")
# Texts read are the results of the questions asked lately, and the neighbours (and their
# sentences) remember reads.
_READ_TEXTS: Final = 1024


@functools.lru_cache(maxsize=_READ_TEXTS)
def speaks_of_another_time(text: str) -> bool:
    """Whether ``text``, a fact of a sentence or so, sets what it says before now, in a
    possible future or in one moment only (see the module docstring)."""
    return _of_another_time(text, _MAYBE_OR_ONCE, _BEFORE)


@functools.lru_cache(maxsize=_READ_TEXTS)
def opens_in_another_time(sentence: str) -> bool:
    """Whether ``sentence``, of a longer text, opens on words that set it before now, in a
    possible future or in one moment only."""
    return _of_another_time(sentence, _MAYBE_OR_ONCE_OPENING, _BEFORE_AS_OPENING)


def of_another_time(newer: str, older: str) -> bool:
    """Whether fact ``newer`` speaks of another time than now where ``older`` does not: the
    older may be a plan itself ("We might move to Vercel."), which a later plan updates."""
    return speaks_of_another_time(newer) and not speaks_of_another_time(older)


def sentence_of_another_time(newer: str, older: str) -> bool:
    """``of_another_time`` for two sentences of longer texts, read by their openings."""
    return opens_in_another_time(newer) and not opens_in_another_time(older)


def _of_another_time(text: str, maybe_or_once: re.Pattern[str], before: re.Pattern[str]) -> bool:
    read = lowered(text)
    if _NOW.search(read) is not None:
        return False
    if maybe_or_once.search(read) is not None:
        return True
    # What was so before, unless the text says what changed since ("Before the migration we
    # ran MySQL; Postgres since March.").
    if before.search(read) is None:
        return False
    return CHANGE_MARKS.isdisjoint(_WORD.findall(read))
