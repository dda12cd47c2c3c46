"""A fact told the other way round (``shared.ranking.updates``): "The frontend is built with
webpack." → "Vite builds the frontend."; "The web app is deployed to Heroku." → "Fly.io hosts
the web app." (pure).

English names what a sentence is about first, and rule 3 reads a change at the first word as
another subject ("Anna was born in Oslo." / "Omar was born in Oslo."). A sentence turned
round puts its value first instead, and what the older fact was about moves behind it: the
older's subject is still said, only later (maybe as the first word of a longer name, "our CI
pipelines"). So the newer is another value of the same thing
when what the older opens with is said by the newer after the words it gains, the words the
older loses all stand after that subject, and each side changes a slot's words at most. The
distractor of the same pattern keeps its value where it was and loses the subject, and is not
read so.
"""

from __future__ import annotations

from typing import Final

from shared.model.tokens import is_name
from shared.ranking.evidence import Update
from shared.ranking.measures import figures_agree
from shared.ranking.same_subject import MAX_SLOT_TERMS
from shared.ranking.values import is_address
from shared.ranking.wording import CHANGE_TERMS, Wording

_DETERMINERS: Final = frozenset("the our its their my your his her this that".split())


def turned_around(newer: Wording, older: Wording) -> Update | None:
    """The evidence that ``newer``, a fact of a sentence, gives another value of what ``older``
    opens with, told the other way round (see the module docstring), or None."""
    if not older.terms or len(newer.terms) < 2:
        return None
    subject = older.terms[0]
    if subject not in newer.distinct or subject in newer.terms[:1]:
        return None
    gone = [t for t in dict.fromkeys(older.terms) if t not in newer.distinct]
    said = [t for t in dict.fromkeys(newer.terms) if t not in older.distinct]
    ending = _subject_ending(newer, subject)
    if ending is not None and ending in said:
        said.remove(ending)
    came = [t for t in said if t not in CHANGE_TERMS]
    if not (0 < len(gone) <= MAX_SLOT_TERMS and 0 < len(came) <= MAX_SLOT_TERMS):
        return None
    # All the newer says anew leads it, before what the older was about.
    if newer.terms.index(subject) < max(newer.terms.index(t) for t in said):
        return None
    if any(is_name(t) and not is_address(t) for t in (*gone, *came)):
        return None  # one identifier for another names another thing (rule 3)
    if not figures_agree(older, gone, newer, came):
        return None
    return Update(evidence="replaced", old=tuple(gone), new=tuple(came))


def _subject_ending(newer: Wording, subject: str) -> str | None:
    """The one word that ends ``newer`` right after the older's subject, itself right after a
    determiner, the noun the subject qualifies ("GitHub Actions runs our CI pipelines." of "Our
    CI runs on CircleCI."): the subject said again in a longer name, no word of its own. The
    determiner tells a name ("our CI pipelines") from a verb and its object ("the docs site
    repo uses yarn" of "I use pnpm in the frontend repo.")."""
    if len(newer.spaced) < 3 or newer.spaced[-2] != subject:
        return None
    if newer.spaced[-3] not in _DETERMINERS:
        return None
    last = newer.spaced[-1]
    return last if newer.terms[-1] == last else None
