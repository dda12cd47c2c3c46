"""What a figure measures, as the words around it tell: the unit after it ("14 days", "2 GB",
"800ms", "3.2%", "$15"), the day or month it dates ("May 20"), the thing it counts ("3 pods"),
the name it is a version of ("iOS 15", "Postgres 16"), or the word before it ("port 9090").
A figure lost and one gained that measure different things are two attributes of one subject,
not a value and its update, however the newer text announces a change ("The mobile app
supports iOS 15 and up." / "The mobile app bundle is about 48 MB now."; "The worker uses 2 GB
of memory." / "The worker now runs 8 threads."). A figure whose words tell nothing ("is 20",
"to 50") measures whatever the other does (pure)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final

from shared.model.tokens import terms
from shared.ranking.values import (
    CLOCK_WORDS,
    is_calendar,
    is_figure,
    is_percentile,
    is_value,
    value_kind,
)
from shared.ranking.wording import CHANGE_TERMS, Wording


def _units(kind: str, words: str) -> dict[str, str]:
    """Each unit word as the content terms spell it, with the kind of quantity it measures."""
    return {term: kind for word in words.split() for term in terms(word)} | {
        word: kind for word in words.split()
    }


# Units by the quantity they measure: "30 minutes" and "2 hours" are one attribute, "20 GB"
# and "12 minutes" two.
UNITS: Final = (
    _units(
        "time",
        "ms msec millisecond milliseconds s sec secs second seconds min mins minute minutes "
        "h hr hrs hour hours d day days week weeks wk month months year years yr yrs",
    )
    | _units("size", "b byte bytes kb kib mb mib gb gib tb tib ki mi gi ti")
    | _units("rate", "rps qps rpm tps")
    | _units("money", "usd eur gbp dollar dollars euro euros cent cents")
    | _units("clock", "am pm")
    | _units("share", "percent pct")
)
# A time of day written as hours and minutes ("9:30", "17:45").
_HOURS_MINUTES: Final = re.compile(r"^(?:[01]?\d|2[0-3]):[0-5]\d$")
# A unit written onto its figure ("800ms", "16gb", "9:30am").
_GLUED: Final = re.compile(r"^[\d.,:]+([a-z]+)$")
_CURRENCY: Final = "$€£"
_PER: Final = frozenset({"per", "a", "an", "each", "every"})
_COUNT: Final = "count:"
_LABEL: Final = "label:"
_LOOSE: Final = (_COUNT, _LABEL)


def measure(wording: Wording, value: str) -> str | None:
    """What ``value`` (a figure of ``wording``) measures where it first stands: what it says
    as written, else what the words beside it say (``_beside``)."""
    return _as_written(wording, value) or _beside(wording, value)


def measured_outright(wording: Wording, value: str) -> bool:
    """Whether ``value`` carries what it measures (a unit, a time, a day, a version), rather
    than the thing it counts or the word before it: "one release" and "every second Tuesday"
    share a word, not a measure."""
    told = measure(wording, value)
    return told is not None and not told.startswith(_LOOSE)


def _as_written(wording: Wording, value: str) -> str | None:
    """A time said as a word ("midnight") or in hours and minutes ("9:30"), a day or a month,
    a percentile, a unit written onto the figure ("800ms", "16gb"), a share ("3.2%") or money
    ("$15")."""
    if value in CLOCK_WORDS or _HOURS_MINUTES.match(value):
        return "clock"
    if is_calendar(value):
        return "calendar"
    if is_percentile(value):
        return "percentile"
    glued = _GLUED.match(value)
    if glued is not None and glued.group(1) in UNITS:
        return UNITS[glued.group(1)]
    if f"{value}%" in wording.lowered:
        return "share"
    if any(f"{mark}{value}" in wording.lowered for mark in _CURRENCY):
        return "money"
    return None


def _beside(wording: Wording, value: str) -> str | None:
    """A unit's kind after the figure (a count per unit of time is a rate), ``count:`` and the
    term it counts, the day or month before it, ``version`` after a name, ``label:`` and the
    content word right before it, or None."""
    spaced = wording.spaced
    if value not in spaced:
        return None
    at = spaced.index(value)
    after = spaced[at + 1] if at + 1 < len(spaced) else None
    if after is not None and after in UNITS:
        return UNITS[after]
    if (
        after is not None
        and after in wording.distinct
        and after not in wording.values
        and not is_value(after)
        and after not in CHANGE_TERMS
    ):
        # "100 requests per minute" is a rate, as "60 rpm" is.
        rest = spaced[at + 2 : at + 4]
        if len(rest) == 2 and rest[0] in _PER and UNITS.get(rest[1]) == "time":
            return "rate"
        return f"{_COUNT}{after}"
    before = spaced[at - 1] if at > 0 else None
    if before is not None and is_calendar(before):
        return "calendar"  # "June 1", "May 20"
    if before is None or before not in wording.distinct or before in CHANGE_TERMS:
        return None
    if before in wording.values:
        return "version" if value_kind(before) == "name" else None
    return f"{_LABEL}{before}"


def _noun(measured: str) -> str:
    return measured.partition(":")[2]


def _named_lower(version: str, label: str, named_in: Wording) -> bool:
    """Whether ``label`` (a figure's measure in one text) is the word before it, which the
    other text (``named_in``, where the figure's measure is ``version``) holds as a name."""
    return version == "version" and label.startswith(_LABEL) and _noun(label) in named_in.values


def same_measure(older: Wording, was: str, newer: Wording, now: str) -> bool:
    """Whether figure ``was`` of ``older`` and ``now`` of ``newer`` may be one attribute's
    values: a figure that tells nothing of what it measures may be; two that do, only if they
    measure the same, or both count something. Not a figure: nothing to compare."""
    if not (is_figure(was) and is_figure(now)):
        return True
    before, after = measure(older, was), measure(newer, now)
    if before is None or after is None or before == after:
        return True
    # A name's version, its name written in lower case in the other text ("Node 18" / "node
    # 20"): the word is read as a label there, but it is the same name.
    if _named_lower(before, after, older) or _named_lower(after, before, newer):
        return True
    if not (before.startswith(_LOOSE) and after.startswith(_LOOSE)):
        return False
    # What is counted is often named two ways ("3 replicas" → "6 pods"), and a word read
    # before a figure is as often a verb ("listens on 8081", "retries 5"); a count and such a
    # word differ only where neither text holds the other's ("port 4000" / "6 replicas").
    if before.partition(":")[0] == after.partition(":")[0]:
        return True
    return _noun(before) in newer.distinct or _noun(after) in older.distinct


def figures_agree(older: Wording, gone: Iterable[str], newer: Wording, came: Iterable[str]) -> bool:
    """Whether the figures among words ``older`` lost and ``newer`` gained may be one
    attribute's values: true unless both hold figures and no two of them measure the same."""
    was = [t for t in gone if is_figure(t)]
    now = [t for t in came if is_figure(t)]
    return not (was and now) or any(same_measure(older, a, newer, b) for a in was for b in now)


def swapped_in_kind(
    older: Wording,
    gone: Iterable[str],
    newer: Wording,
    came: Iterable[str],
    kind: Callable[[str], object],
) -> bool:
    """Whether a value ``older`` lost and one ``newer`` gained are of one ``kind`` and measure
    the same thing. A unit is a part of its figure ("48 MB" is one value), of the kind of
    quantity it measures, never a name, however it is cased."""

    def kind_of(wording: Wording, term: str) -> object:
        return ("unit", UNITS[term]) if _a_unit(wording, term) else kind(term)

    came = list(came)
    return any(
        kind_of(older, was) == kind_of(newer, now) and same_measure(older, was, newer, now)
        for was in gone
        for now in came
    )


def _a_unit(wording: Wording, term: str) -> bool:
    """Whether ``term`` stands as a unit in ``wording``: a unit word right after a figure ("48
    MB"); alone it may be a name ("UTC", "PM" for a project manager)."""
    if term not in UNITS or term not in wording.spaced:
        return False
    at = wording.spaced.index(term)
    return at > 0 and is_figure(wording.spaced[at - 1])
