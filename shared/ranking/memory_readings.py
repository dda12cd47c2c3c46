"""A memory's text as newer-first reads it (``shared.ranking.versions``): its plain words, its
values, whether it is a fact of a sentence or so, and, for such facts, the whole reading;
each kept for the memories read lately (pure)."""

from __future__ import annotations

import functools
from typing import Final

from shared.model.tokens import STOP_WORDS, terms
from shared.ranking.wording import (
    FACT_TERMS,
    Wording,
    addition_marks,
    is_one_sentence,
    states_something,
    word_set,
    written_out,
)

# How many memories' words and values newer-first keeps: the results of the questions asked
# lately, which come back often (a long memory's words cost a pass over all of its text).
READ_MEMORIES: Final = 256


@functools.lru_cache(maxsize=READ_MEMORIES)
def words_of(content: str) -> frozenset[str]:
    """The plain words of ``content``, each short form written out."""
    return written_out(word_set(content))


@functools.lru_cache(maxsize=READ_MEMORIES)
def values_of(content: str) -> frozenset[str]:
    """The values ``content`` gives (``Wording.values``)."""
    if is_a_fact(words_of(content)) and is_one_sentence(content):
        return wording_of(content).values  # a fact the note rule may read whole: read it once
    return Wording(content).values


# Whole readings are kept only of the one-sentence facts newer-first's note rule reads: a long
# memory's reading holds every term of its text, and its values are all newer-first needs.
@functools.lru_cache(maxsize=READ_MEMORIES)
def wording_of(content: str) -> Wording:
    return Wording(content)


@functools.lru_cache(maxsize=READ_MEMORIES)
def one_fact_of(content: str) -> bool:
    """A fact of one sentence that states something (a chat turn's question states nothing)."""
    return is_a_fact(words_of(content)) and is_one_sentence(content) and states_something(content)


@functools.lru_cache(maxsize=READ_MEMORIES)
def plain_terms_of(content: str) -> frozenset[str]:
    """The keyword leg's terms of the words ``content`` writes in lower case: what it says of
    a subject, not whom it names. Capitals tell a name only inside a sentence, and a first name
    opens one as often as not ("Ximena Cruz works as a teacher.")."""
    return frozenset(terms(" ".join(w for w in content.split() if not w[:1].isupper())))


def is_a_fact(words: frozenset[str]) -> bool:
    """Words of a fact told in a sentence or so (``FACT_TERMS``, stop words left out), not a
    chat turn: between two facts, holding the same words of the question is holding the same
    subject; a later turn with them is as often another moment of the conversation."""
    return len(words - STOP_WORDS) <= FACT_TERMS


def says_it_adds(newer: str, new_words: frozenset[str], old_words: frozenset[str]) -> bool:
    """A fact (``newer``, whose words are ``new_words``) that says it adds ("also", "another");
    in a longer text such a word belongs to one of its sentences, not to what it says of the
    subject."""
    return is_a_fact(new_words) and bool(additions_of(newer) - old_words)


@functools.lru_cache(maxsize=READ_MEMORIES)
def additions_of(content: str) -> frozenset[str]:
    """The words of ``content`` that say it adds (``addition_marks``)."""
    return addition_marks(content)
