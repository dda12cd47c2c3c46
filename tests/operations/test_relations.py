"""Short facts that share only a name, recalled against real PostgreSQL and the real local model:
the same relation in other words is a newer version and goes first; another relation of the same
person stays below the fact asked about. The model reads each fact once."""

from __future__ import annotations

import msgspec

from shared.operations import OperationsContext
from shared.operations.recall import recall
from shared.operations.relations import RelationVectors
from tests.operations.conftest import Clock
from tests.operations.test_operations import remember

CEO_WAS = "The CEO of Corvid Analytics is Lars Eriksen."
CEO_NOW = "Corvid Analytics is run by its chief executive Fatima Zahra."
WORKS = "Omar Haddad works for the United Nations."
CITIZEN = "Omar Haddad is a citizen of Canada."


async def answered(ops: OperationsContext, question: str) -> list[str]:
    answer = await recall(ops, "acme", None, query=question, mode="balanced", limit=5)
    assert answer.outcome is not None
    return [r.memory.content for r in answer.outcome.results]


async def remember_in_order(ops: OperationsContext, clock: Clock, *facts: str) -> None:
    for fact in facts:
        await remember(ops, fact)
        clock.advance(60_000)


async def test_the_same_relation_in_other_words_is_put_first(
    ops: OperationsContext, clock: Clock
) -> None:
    await remember_in_order(ops, clock, CEO_WAS, WORKS, CEO_NOW, CITIZEN)
    question = "Who is the CEO of Corvid Analytics?"
    assert (await answered(ops, question))[:2] == [CEO_NOW, CEO_WAS]
    # Read by their words alone, the fact asked in the question's words stays first.
    by_words = msgspec.structs.replace(ops, relations=None)
    assert (await answered(by_words, question))[:2] == [CEO_WAS, CEO_NOW]


async def test_another_relation_of_the_same_person_stays_below(
    ops: OperationsContext, clock: Clock
) -> None:
    await remember_in_order(ops, clock, CEO_WAS, WORKS, CEO_NOW, CITIZEN)
    question = "Who does Omar Haddad work for?"
    assert (await answered(ops, question))[:2] == [WORKS, CITIZEN]
    by_words = msgspec.structs.replace(ops, relations=None)
    assert (await answered(by_words, question))[:2] == [CITIZEN, WORKS]


async def test_each_relation_is_read_once_and_only_when_a_ranking_asks(
    ops: OperationsContext,
) -> None:
    assert ops.relations is not None  # the local model's line is measured
    vectors = RelationVectors(ops.embedder, alike_at=0.65)
    reading = vectors.reading()
    assert reading.alike(CEO_NOW, CEO_WAS) is None  # not read yet: the words decide
    assert reading.unread == {
        "The CEO of someone is someone.",
        "someone is run by its chief executive someone.",
    }
    assert await reading.read_unread() is True
    assert reading.alike(CEO_NOW, CEO_WAS) is True
    assert reading.alike(CITIZEN, WORKS) is None
    assert await reading.read_unread() is True
    assert reading.alike(CITIZEN, WORKS) is False
    assert await reading.read_unread() is False  # nothing left to read
