"""Which terms of a text are values, and of what kind (``shared.ranking.wording`` reads a text
with them): a figure (a number, a number word, a day or a month, a time, a percentile), an
address (a host name, a URL), or a name; a value is what a fact says that may change (pure)."""

from __future__ import annotations

import re
from typing import Final

from shared.model.tokens import terms

_NUMBER_WORDS: Final = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    twenty thirty forty fifty sixty hundred thousand million billion once twice thrice half
    quarter double triple single daily weekly monthly yearly hourly nightly biweekly quarterly
    first second third fourth fifth last
    """.split()
)
_CALENDAR: Final = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec today tomorrow yesterday morning afternoon
    evening night weekend weekday
    """.split()
)
# Times of day said as words: what "12pm" and "0:00" say, read off a clock as they are, not a
# part of the day ("runs at midnight" → "moved to 3am" is one time for another).
CLOCK_WORDS: Final = frozenset({"noon", "midnight"})
# The same words as the content terms spell them: "October" is "octob".
_CALENDAR_TERMS: Final = frozenset(term for word in _CALENDAR for term in terms(word))
# A percentile as latencies are written: a figure, not a name.
_PERCENTILE: Final = re.compile(r"p\d{2,3}")
# The last label of a host name, as it is usually written in a project's notes.
_TOP_LEVEL_DOMAINS: Final = frozenset(
    "com org net io dev app ai co cloud sh me info biz us uk de eu internal local lan corp "
    "example test localhost".split()
)
# The extensions of the files a project's notes name: configuration, lock files, data and
# documents ("js" and "ts" also end the names of frameworks, "Node.js").
_FILE_EXTENSIONS: Final = frozenset(
    "json yaml yml toml lock ini cfg conf env xml csv tsv md txt log sql zsh bash py rb go "
    "rs java tf hcl proto pem crt key".split()
)
# A digit or an identifier character: a term that carries one is a value.
_VALUE_MARK: Final = re.compile(r"[\d_./:#@+~]")


def is_value(term: str) -> bool:
    """Whether a term is a value whatever its case: a figure, or an identifier (a digit or an
    identifier character in it, or a command-line flag)."""
    return is_figure(term) or _VALUE_MARK.search(term) is not None or term.startswith("-")


def is_number_word(term: str) -> bool:
    """Whether a term is a number said as a word ("two", "weekly", "last")."""
    return term in _NUMBER_WORDS


def is_figure(term: str) -> bool:
    """Whether a value is a figure (a number, a number word, a day, a month, a time), as
    opposed to a name or an identifier (``S3``, ``us-east-1``, a host name)."""
    return (
        term[:1].isdigit()
        or term in _NUMBER_WORDS
        or term in _CALENDAR
        or term in CLOCK_WORDS
        or is_percentile(term)
    )


def is_percentile(term: str) -> bool:
    """Whether a term is a percentile as latencies are written ("p99", "p50"): a figure."""
    return _PERCENTILE.fullmatch(term) is not None


def is_calendar(term: str) -> bool:
    """Whether a term is a day or a month, as a value or as the content terms spell it
    ("octob" of "October")."""
    return term in _CALENDAR or term in _CALENDAR_TERMS


def value_kind(term: str) -> str:
    """A value's kind, finer than ``is_figure``: a day or a month, another figure (a number, a
    time), a file (a path, or a name with a file's extension: "package-lock.json" is no tool
    that took Webpack's place), or a name (an identifier included)."""
    if term in _CALENDAR:
        return "calendar"
    if is_figure(term):
        return "figure"
    return "file" if is_file(term) else "name"


def is_file(term: str) -> bool:
    """Whether a term names a file: a path ("~/.zshrc", "./bin/dev") or a name with the
    extension of a file a project keeps ("package-lock.json", "values.yaml"). A framework
    named like a script ("Node.js", "Next.js") is no file."""
    if term.startswith(("~/", "/", "./")):
        return True
    stem, dot, extension = term.rpartition(".")
    return bool(stem and dot) and extension in _FILE_EXTENSIONS


def is_address(term: str) -> bool:
    """Whether a term is where something is reached (a host name, a URL, an e-mail address):
    a value a place holds, which may change, not a name for the thing a sentence is about."""
    if "://" in term:
        return True
    host = term.rpartition("@")[2].partition(":")[0].rstrip(".")
    labels = host.split(".")
    return len(labels) > 1 and all(labels) and labels[-1] in _TOP_LEVEL_DOMAINS
