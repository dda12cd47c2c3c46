"""Does a short fact speak of another time than now: what was so before ("Before Sam, billing
was owned by Rita."), what may be so one day ("We might look at upgrading prod to Postgres 16
next year."), or what is so once ("This week only, design review is in Cedar")? Such a fact
is written later than the one it names, but it does not say what is so now, so it updates
nothing and is no newer version to put first (``shared.ranking.updates``,
``shared.ranking.versions``) (pure).

A change reported in the past tense is still a change ("We moved to Linear last week."): only
the words that set a statement in another time count, not the tense of its verb; and a fact
that also says what is so now ("We used to deploy with Jenkins; it's GitHub Actions now.")
states the present. A chat turn says "maybe" and "before" of its own moment, so only facts of
a sentence or two are read so.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from shared.ranking.wording import CHANGE_MARKS

# What was so before, said first ("Before Mei, …", "Back in 2021 …") or as a habit left ("We
# used to …"). Inside a sentence "previously" and "formerly" name the value a change replaced
# ("The API listens on 9090 (previously 8080)."), which is an update.
_BEFORE: Final = re.compile(
    r"^(?:before|back in|prior to|previously|formerly|originally)\b|\bused to\b"
)
# What may be so one day: a plan, a wish, a question put to the team.
_MAYBE: Final = (
    r"\b(?:might|maybe|perhaps|could we|should we|thinking about|thinking of"
    r"|on the roadmap|at some point|nothing decided|nothing is decided|not decided"
    r"|plan to|planning to|would like to)\b"
)
# What is so once: an exception to what stays so ("Last Monday's sprint planning got pushed").
_ONCE: Final = r"\b(?:this week only|just this week|just this once|one-off|one off)\b|^last \w+'s\b"
_MAYBE_OR_ONCE: Final = re.compile(f"{_MAYBE}|{_ONCE}")
# A text that also says what is so now states the present, whatever it recalls or plans
# beside it: "We used to deploy with Jenkins; it's GitHub Actions now.", "The standup is at
# 10 now, previously 9."
_NOW: Final = re.compile(
    r"\b(?:now|currently|nowadays|these days|any ?more|no longer|from now on|going forward)\b"
)
_WORD: Final = re.compile(r"[a-z]+")
# Texts read are the results of the questions asked lately, and the neighbours remember reads.
_READ_TEXTS: Final = 1024


@functools.lru_cache(maxsize=_READ_TEXTS)
def speaks_of_another_time(text: str) -> bool:
    """Whether ``text`` sets what it says before now, in a possible future or in one moment
    only (see the module docstring)."""
    lowered = " ".join(text.replace("\u2019", "'").lower().split())
    if _NOW.search(lowered) is not None:
        return False
    if _MAYBE_OR_ONCE.search(lowered) is not None:
        return True
    # What was so before, unless the text says what changed since ("Before the migration we
    # ran MySQL; Postgres since March.").
    if _BEFORE.search(lowered) is None:
        return False
    return CHANGE_MARKS.isdisjoint(_WORD.findall(lowered))


def of_another_time(newer: str, older: str) -> bool:
    """Whether ``newer`` speaks of another time than now where ``older`` does not: the older
    may be a plan itself ("We might move to Vercel."), which a later plan updates."""
    return speaks_of_another_time(newer) and not speaks_of_another_time(older)
