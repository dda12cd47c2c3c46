"""What a short fact says of whom it names, read apart from the names (pure).

Two facts that share a name and no other word may tell one relation of it in other words ("The
CEO of Corvid Analytics is Lars Eriksen." / "Corvid Analytics is run by its chief executive
Fatima Zahra.") or two relations of it ("Aiko Tanaka lives in Lisbon." / "Aiko Tanaka is a
citizen of Portugal."). No word rule tells the two apart, and the facts' own cosines do not
either: the shared name weighs as much as the relation. With every name and figure masked
("someone is run by its chief executive someone"), the embedding model reads the relation
alone, and reads the same relation in other words well above two relations
(docs/calibration.md, "Two facts that share only a name"). Some rewordings still read apart
("someone lives in someone." / "The city someone calls home is someone."); asked about the
person they share, each is read against the question's own relation ("Which city does someone
live in?"), and both tell it.

The vectors come from the caller (``RelationReader``): ranking stays free of I/O.
"""

from __future__ import annotations

import functools
from typing import Final, Protocol

from shared.model.tokens import STOP_WORDS, terms
from shared.ranking.chat_turns import unaddressed, unlabelled

# What stands in for a name or a figure: a word the model reads as "a person or thing".
MASK: Final = "someone"
_EDGE_PUNCTUATION: Final = ".,;:!?'\"()"
# Memories read lately: a fact asked about once is usually asked about again.
_READ_TEXTS: Final = 1024


class RelationReader(Protocol):
    """Whether two facts tell the same relation of what they name, as the model reads them
    with their names masked (``relation_text``): in other words, or, when the question names
    what they share, each the relation the question asks."""

    def alike(self, newer: str, older: str, *, named: bool) -> bool | None:
        """True or False; None while a relation it needs has not been read yet. ``named``:
        whether the question names what the two share."""
        ...


def _is_name(core: str) -> bool:
    """A capitalised word that is no stop word; an acronym is a word of the relation ("CEO",
    "CI"). ``core``: the word without its edge punctuation."""
    acronym = len(core) > 1 and core.isupper()
    return core[:1].isupper() and core.lower() not in STOP_WORDS and not acronym


def _is_figure(core: str) -> bool:
    return any(ch.isdigit() for ch in core)


@functools.lru_cache(maxsize=_READ_TEXTS)
def relation_text(content: str) -> str:
    """``content`` with each run of names and figures written as one ``MASK``, its closing
    punctuation kept: "Aiko Tanaka is a citizen of Chile." → "someone is a citizen of someone."."""
    out: list[str] = []
    in_run = False
    for word in content.split():
        core = word.strip(_EDGE_PUNCTUATION)
        if not (_is_name(core) or _is_figure(core)):
            out.append(word)
            in_run = False
            continue
        closing = word[len(word.rstrip(_EDGE_PUNCTUATION)) :]
        if in_run:
            out[-1] = MASK + closing
        else:
            out.append(MASK + closing)
        in_run = True
    return " ".join(out)


@functools.lru_cache(maxsize=_READ_TEXTS)
def named_terms(content: str) -> frozenset[str]:
    """The keyword terms of the names ``content`` says something of: not its speaker's label,
    nor whom it speaks to ("Thanks, Dave!")."""
    said = unlabelled(unaddressed(content))
    found: set[str] = set()
    for word in said.split():
        core = word.strip(_EDGE_PUNCTUATION)
        if _is_name(core) and not _is_figure(core):
            found.update(terms(core))
    return frozenset(found)


@functools.lru_cache(maxsize=_READ_TEXTS)
def _all_terms(content: str) -> frozenset[str]:
    return frozenset(terms(content))


def shared_names(newer: str, older: str) -> frozenset[str]:
    """The terms of the names both texts speak of."""
    return named_terms(newer) & named_terms(older)


def shares_only_a_name(newer: str, older: str) -> bool:
    """Whether the two texts share a name they speak of and no other content word."""
    common = shared_names(newer, older)
    if not common:
        return False
    return not ((_all_terms(newer) & _all_terms(older)) - common - STOP_WORDS)
