"""What a newer text says it left of an older one: "… from X to …", "dropped X", "X was
retired", ", not X" (``shared.ranking.updates``). Such a text announces the change itself and
may reword everything else (pure)."""

from __future__ import annotations

import re
from typing import Final

from shared.model.tokens import indexed_form
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
    "gone",
    "out",
)
# A correction names what it corrects after a comma: "… is 2 seconds, not 5", "… go to
# #ops-pager, not #alerts-prod".
_CORRECTED: Final = ", not "
_DROPPED_WORDS: Final = frozenset(_DROPPING + tuple(f" {word}" for word in _DROPPED_AS))
_DROPPED: Final = (
    re.compile(rf"\b(?:{'|'.join(_DROPPING)}) (?:the |our )?([\w.\-/#@]+)"),
    re.compile(rf"([\w.\-/#@]+) (?:was|is|are|has been|got) (?:{'|'.join(_DROPPED_AS)})\b"),
    re.compile(rf"{_CORRECTED}(?:the |our )?([\w.\-/#@]+)"),
)


def left_value(newer: Wording, older: Wording) -> str | None:
    """The term of the older text that the newer says it left ("we switched the frontend from
    Axios to fetch", "migrated the tests from Mocha and Chai to Vitest", "we dropped SQLAlchemy
    and use plain asyncpg queries", "Jenkins was retired"), or None."""
    lowered = newer.lowered
    # A substring test first: the patterns open on alternatives tried at every place of the text.
    if "from " in lowered:
        for match in _FROM_TO.finditer(lowered):
            was = indexed_form(match.group(1))
            if was in older.distinct and was not in CHANGE_TERMS:
                return was
    if _CORRECTED not in lowered and not any(word in lowered for word in _DROPPED_WORDS):
        return None
    for pattern in _DROPPED:
        for match in pattern.finditer(lowered):
            # Read lower-cased, a name loses its capitals: "sqlalchemy" is the older text's
            # value, though the term read from "SQLAlchemy" is not this word's stem.
            word = match.group(1).rstrip(".-/").lstrip("#@")
            was = word if word in older.values else indexed_form(word)
            if was in older.values:
                return was
    return None
