"""Short facts that share only a name, recalled against real PostgreSQL and the real local model:
the same relation in other words is a newer version and goes first; another relation of the same
person stays below the fact asked about. The model reads each fact once."""

from __future__ import annotations

import msgspec
import pytest

from shared.operations import OperationsContext
from shared.operations.recall import recall
from shared.operations.relations import RelationVectors
from tests.operations.conftest import Clock
from tests.operations.test_operations import remember

CEO_WAS = "The CEO of Corvid Analytics is Lars Eriksen."
CEO_NOW = "Corvid Analytics is run by its chief executive Fatima Zahra."
WORKS = "Omar Haddad works for the United Nations."
CITIZEN = "Omar Haddad is a citizen of Canada."
HOME_WAS = "Isla Grant lives in Toronto."
HOME_NOW = "The city Isla Grant calls home is Dublin."


async def answered(ops: OperationsContext, question: str) -> list[str]:
    answer = await recall(ops, "acme", None, query=question, mode="balanced", limit=5)
    assert answer.outcome is not None
    return [r.memory.content for r in answer.outcome.results]


async def remember_in_order(ops: OperationsContext, clock: Clock, *facts: str) -> None:
    for fact in facts:
        await remember(ops, fact)
        clock.advance(60_000)


@pytest.mark.parametrize(
    ("question", "with_relations", "by_words"),
    [
        # The same relation in other words is a newer version: it goes first.
        ("Who is the CEO of Corvid Analytics?", [CEO_NOW, CEO_WAS], [CEO_WAS, CEO_NOW]),
        # Another relation of the same person stays below the fact asked about.
        ("Who does Omar Haddad work for?", [WORKS, CITIZEN], [CITIZEN, WORKS]),
    ],
)
async def test_two_facts_that_share_only_a_name_are_ordered_by_their_relation(
    ops: OperationsContext,
    clock: Clock,
    question: str,
    with_relations: list[str],
    by_words: list[str],
) -> None:
    await remember_in_order(ops, clock, CEO_WAS, WORKS, CEO_NOW, CITIZEN)
    assert (await answered(ops, question))[:2] == with_relations
    # Read by their words alone, the order is the other way round.
    words_only = msgspec.structs.replace(ops, relations=None)
    assert (await answered(words_only, question))[:2] == by_words


async def test_each_relation_is_read_once_and_only_when_a_ranking_asks(
    ops: OperationsContext,
) -> None:
    assert ops.relations is not None  # the local model's line is measured
    assert ops.embedder.relation_lines is not None
    vectors = RelationVectors(ops.embedder, ops.embedder.relation_lines)
    reading = vectors.reading("Who is the CEO of Corvid Analytics?")
    assert reading.alike(CEO_NOW, CEO_WAS, named=True) is None  # not read yet: the words decide
    assert reading.unread == {
        "The CEO of someone is someone.",
        "someone is run by its chief executive someone.",
        # The question names what the two share: its relation is read beside theirs.
        "Who is the CEO of someone?",
    }
    assert await reading.read_unread() is True
    assert reading.alike(CEO_NOW, CEO_WAS, named=True) is True
    assert reading.alike(CITIZEN, WORKS, named=False) is None
    assert await reading.read_unread() is True
    assert reading.alike(CITIZEN, WORKS, named=False) is False
    assert await reading.read_unread() is False  # nothing left to read


@pytest.mark.parametrize(
    ("named", "alike"),
    [
        # The question names Isla Grant: both facts tell the relation it asks.
        (True, True),
        # Where it does not, the two are read apart, and tell two relations.
        (False, False),
    ],
)
async def test_the_question_s_relation_is_read_only_when_it_names_what_they_share(
    ops: OperationsContext, named: bool, alike: bool
) -> None:
    assert ops.embedder.relation_lines is not None
    vectors = RelationVectors(ops.embedder, ops.embedder.relation_lines)
    reading = vectors.reading("Which city does Isla Grant live in?")
    assert reading.alike(HOME_NOW, HOME_WAS, named=named) is None
    assert ("Which city does someone live in?" in reading.unread) is named
    assert await reading.read_unread() is True
    assert reading.alike(HOME_NOW, HOME_WAS, named=named) is alike
