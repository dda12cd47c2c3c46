"""How the restated-figure rules (``shared.ranking.figures``) read a sentence's figures (pure):
the measures it gives (a size, a duration, a percentage, a score out of a total, a date), each
in its kind's base unit; the prose sentences of a text that give one, read whole and up to the
clause of the figure; the verbs that give them; and whether two such clauses name apart what
they measure ("the frontend Docker build" / "the backend Docker build")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from shared.model.tokens import terms
from shared.ranking.chat_turns import unlabelled
from shared.ranking.values import is_value
from shared.ranking.wording import CHANGE_TERMS

_SECONDS: Final = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "day": 86400.0,
    "days": 86400.0,
    "week": 604800.0,
    "weeks": 604800.0,
}
_BYTES: Final = {
    "kb": 1e3,
    "kib": 1024.0,
    "mb": 1e6,
    "mib": 1024.0**2,
    "gb": 1e9,
    "gib": 1024.0**3,
    "tb": 1e12,
    "tib": 1024.0**4,
}
_UNITS: Final = {
    **{unit: ("duration", scale) for unit, scale in _SECONDS.items()},
    **{unit: ("size", scale) for unit, scale in _BYTES.items()},
    "%": ("percent", 1.0),
    "percent": ("percent", 1.0),
}
_MONTHS: Final = (
    "january february march april may june july august september october november december".split()
)
_DATE: Final = re.compile(
    r"\b(" + "|".join(_MONTHS) + r")\s+([12]?\d|3[01])(?:st|nd|rd|th)?\b(?:,?\s*(\d{4})\b)?"
)
_FRACTION: Final = re.compile(r"(?<![\w./])(\d{1,4})\s?/\s?(\d{1,4})(?![\w/])")
_MEASURE: Final = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s?("
    + "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
    + r")(?![\w])"
)
_CLAUSE_END: Final = re.compile(r"[,;:]\s| (?:and|but|so|which|while|because) ")
_LEAD_WORD: Final = re.compile(r"[^\W_][\w'.\-]*|[^\w\s]")
_FENCE: Final = "```"
_DIGIT: Final = re.compile(r"\d")
_APPROXIMATELY: Final = frozenset(
    "about around roughly approximately nearly almost only just some over under".split()
)
# How a figure is summed up, which chat words say loosely ("the total frame latency" for "the
# average frame processing latency"): no word that names what is measured.
_SUMMED_UP: Final = frozenset("total average overall mean typical".split())
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+|\n+")
# A piece of a sentence that is code ("f''(x)", "->", "`pip`"): left out, the rest still read.
_CODE_PIECE: Final = re.compile(r"[{}();=<>`|\[\]\\^]|->|=>|::")
# A sentence with more code pieces than this share is code, not prose.
_MOST_CODE: Final = 0.3

Figure = tuple[str, float]  # (kind, magnitude in the kind's base unit)


def figures(sentence: str) -> frozenset[Figure]:
    """The measures a sentence gives: a date, a score out of a total, a number with its unit."""
    lowered = sentence.lower()
    found: set[Figure] = set()
    for match in _DATE.finditer(lowered):
        year = int(match.group(3) or 0)
        month = _MONTHS.index(match.group(1))
        found.add(("date", float(year * 372 + month * 31 + int(match.group(2)))))
    lowered = _DATE.sub(" ", lowered)
    for match in _FRACTION.finditer(lowered):
        part, total = int(match.group(1)), int(match.group(2))
        if 0 < total and part <= total:
            found.add((f"out of {total}" if total > 1 else "fraction", part / total))
    lowered = _FRACTION.sub(" ", lowered)
    for match in _MEASURE.finditer(lowered):
        number = float(match.group(1).replace(",", "") + "." + (match.group(2) or "0"))
        kind, scale = _UNITS[match.group(3)]
        found.add((kind, number * scale))
    return frozenset(found)


def figure_sentences(text: str) -> list[tuple[tuple[str, ...], frozenset[Figure]]]:
    """The sentences of ``text`` that give a measure, outside code blocks, with the code pieces
    of a prose sentence left out (a chat sentence quotes a formula or an arrow mid-way); each
    in its readings (``_readings``) with its figures. A chat turn's speaker label is no part of
    its first sentence ("user: Back in 2022 the token was valid for 24 hours.")."""
    found = []
    for said in _prose_with_numbers(unlabelled(text)):
        held = figures(said)
        if held:
            found.append((_readings(said), held))
    return found


def _prose_with_numbers(text: str) -> Iterator[str]:
    """The prose sentences of ``text`` that hold a digit, which every figure has: outside code
    blocks, with their code pieces left out."""
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith(_FENCE):
            in_code = not in_code
            continue
        if in_code or not _DIGIT.search(line):
            continue
        for sentence in _SENTENCE_END.split(line):
            if not _DIGIT.search(sentence):
                continue
            pieces = sentence.split()
            prose = [p for p in pieces if not _CODE_PIECE.search(p)]
            if prose and len(pieces) - len(prose) <= _MOST_CODE * len(pieces):
                yield " ".join(prose)


def _readings(sentence: str) -> tuple[str, ...]:
    """The sentence, and the sentence up to the end of the clause that gives its last figure: a
    chat sentence runs on to other things ("…, which is currently averaging around 140MB per
    session, and I want to make sure …") that blur what the figure measures, but a shorter one
    may name what it measures after the figure ("a deadline of April 1, 2024, to complete the
    prototype")."""
    lowered = sentence.lower()
    last = max(
        (m.end() for pattern in (_DATE, _FRACTION, _MEASURE) for m in pattern.finditer(lowered)),
        default=len(sentence),
    )
    cut = _CLAUSE_END.search(sentence, last)
    return (sentence, sentence[: cut.start()]) if cut else (sentence,)


def saying(sentence: str) -> frozenset[str]:
    """The terms of the words right before the sentence's figures, words of approximation
    passed over: the verbs that give them ("takes about 14 minutes", "reaches 81%")."""
    lowered = sentence.lower()
    found: set[str] = set()
    for pattern in (_DATE, _FRACTION, _MEASURE):
        for match in pattern.finditer(lowered):
            before = lowered[: match.start()].split()
            while before and before[-1] in _APPROXIMATELY:
                before.pop()
            if before:
                found.update(terms(before[-1]))
    return frozenset(found)


def _leads(clause: str) -> dict[str, frozenset[str] | None]:
    """For each content term of ``clause``, the content terms of the words right before it
    ("docker" ← "frontend" in "the frontend Docker build"); None where one of its places has
    none there (a stop word, a change mark, a value, punctuation, or a word of approximation or
    of how the figure is summed up: ``_SUMMED_UP``)."""
    found: dict[str, set[str] | None] = {}
    before: list[str] = []
    for word in _LEAD_WORD.findall(clause.lower()):
        passed = word in _APPROXIMATELY or word in _SUMMED_UP
        said = [] if passed else [t for t in terms(word) if not is_value(t)]
        for term in said:
            led = found.setdefault(term, set())
            if led is not None:
                if before:
                    led.update(before)
                else:
                    found[term] = None
        before = [t for t in said if t not in CHANGE_TERMS]
    return {t: None if led is None else frozenset(led) for t, led in found.items()}


def named_apart(newer_clause: str, older_clause: str) -> bool:
    """Whether the two clauses name what their figures measure apart: a word both hold led, in
    each, by words the other clause does not hold ("the frontend Docker build" / "the backend
    Docker build", "the recommendations endpoint" / "the search endpoint"). Not the verb that
    gives a figure, which an adverb or its subject leads ("usually uses around 1.5GB" / "the
    worker container uses about 600MB")."""
    new, old = _leads(newer_clause), _leads(older_clause)
    verbs = saying(newer_clause) | saying(older_clause)
    for term in new.keys() & old.keys() - verbs:
        led_new, led_old = new[term], old[term]
        if led_new and led_old and led_new.isdisjoint(old) and led_old.isdisjoint(new):
            return True
    return False
