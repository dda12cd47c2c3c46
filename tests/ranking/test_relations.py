"""Two short facts that share only a name: read apart from the name, they tell one relation (the
newer is a version of the older) or two (the newer is another fact of the same person or thing).
The model's reading comes from the caller; here a table stands for it."""

from __future__ import annotations

import pytest

from shared.model import Memory
from shared.ranking.relations import named_terms, relation_text, shares_only_a_name
from shared.ranking.versions import newer_first


@pytest.mark.parametrize(
    ("content", "relation"),
    [
        ("Aiko Tanaka is a citizen of Chile.", "someone is a citizen of someone."),
        # An acronym is a word of the relation, not a name.
        ("The CEO of Corvid Analytics is Lars Eriksen.", "The CEO of someone is someone."),
        (
            "Corvid Analytics is run by its chief executive Fatima Zahra.",
            "someone is run by its chief executive someone.",
        ),
        # A figure is masked like a name: what changed is not what the fact is about.
        ("Omar Haddad was born in 1985, in Oslo.", "someone was born in someone, in someone."),
    ],
)
def test_a_relation_is_the_fact_with_its_names_and_figures_masked(
    content: str, relation: str
) -> None:
    assert relation_text(content) == relation


def test_the_names_a_fact_speaks_of_leave_out_its_speaker_and_whom_it_addresses() -> None:
    assert named_terms("Caroline: We flew to Lisbon, Melanie!") == named_terms("Lisbon")
    assert named_terms("Aiko Tanaka lives in Lisbon.") == named_terms("Aiko Tanaka Lisbon")


@pytest.mark.parametrize(
    ("newer", "older", "only_a_name"),
    [
        ("Aiko Tanaka is a citizen of Portugal.", "Aiko Tanaka lives in Lisbon.", True),
        # Another word in common: the word rules read the pair, not the model.
        ("Aiko Tanaka lives in Porto.", "Aiko Tanaka lives in Lisbon.", False),
        # No name in common.
        ("Omar Haddad lives in Lisbon.", "Aiko Tanaka works as a nurse.", False),
        # A speaker's label is not a name the turn speaks of.
        ("Caroline: I painted a lake.", "Caroline: We adopted a puppy.", False),
    ],
)
def test_a_pair_shares_only_a_name_when_nothing_else_is_in_common(
    newer: str, older: str, only_a_name: bool
) -> None:
    assert shares_only_a_name(newer, older) is only_a_name


class TableReader:
    """The model's reading as a table: the pairs (newer, older) that tell the same relation;
    None for a pair left out, as for a fact not read yet."""

    def __init__(self, alike: dict[tuple[str, str], bool]) -> None:
        self._alike = alike
        self.asked: list[tuple[str, str]] = []
        self.named: dict[tuple[str, str], bool] = {}

    def alike(self, newer: str, older: str, *, named: bool) -> bool | None:
        self.asked.append((newer, older))
        self.named[newer, older] = named
        return self._alike.get((newer, older))


def written(memory_id: str, content: str, minute: int) -> Memory:
    return Memory(
        id=memory_id, tenant="t", content=content, created_at=f"2026-01-01T00:{minute:02d}:00.000Z"
    )


CEO_WAS = "The CEO of Corvid Analytics is Lars Eriksen."
CEO_NOW = "Corvid Analytics is run by its chief executive Fatima Zahra."
LIVES = "Omar Haddad works for the United Nations."
CITIZEN = "Omar Haddad is a citizen of Canada."


def ordered(older: str, newer: str, scores: list[float], reader: TableReader | None) -> list[str]:
    memories = [written("01A", older, 1), written("01B", newer, 2)]
    order = newer_first([0, 1], memories, scores, [0, 0], band=0.15, relations=reader)
    return [memories[i].content for i in order]


def test_the_same_relation_in_other_words_goes_first_however_much_less_relevant() -> None:
    reader = TableReader({(CEO_NOW, CEO_WAS): True})
    assert ordered(CEO_WAS, CEO_NOW, [0.80, 0.40], reader) == [CEO_NOW, CEO_WAS]
    assert reader.asked == [(CEO_NOW, CEO_WAS)]
    # Without the model's reading, the words alone leave the older first.
    assert ordered(CEO_WAS, CEO_NOW, [0.80, 0.40], None) == [CEO_WAS, CEO_NOW]


def test_another_relation_of_the_same_person_stays_below_however_near() -> None:
    reader = TableReader({(CITIZEN, LIVES): False})
    assert ordered(LIVES, CITIZEN, [0.80, 0.79], reader) == [LIVES, CITIZEN]
    # Read by its words alone, a newer fact this near on the same person went first.
    assert ordered(LIVES, CITIZEN, [0.80, 0.79], None) == [CITIZEN, LIVES]


def test_a_pair_not_read_yet_is_ordered_by_its_words() -> None:
    reader = TableReader({})
    assert ordered(LIVES, CITIZEN, [0.80, 0.79], reader) == [CITIZEN, LIVES]
    assert reader.asked == [(CITIZEN, LIVES)]


def test_the_model_is_not_asked_about_facts_that_share_other_words() -> None:
    reader = TableReader({})
    older, newer = "Aiko Tanaka lives in Lisbon.", "Aiko Tanaka lives in Porto now."
    assert ordered(older, newer, [0.80, 0.79], reader) == [newer, older]
    assert reader.asked == []


LIVES_WAS = "Mateo Rossi lives in Nairobi."
LIVES_NOW = "Mateo Rossi's home is in Kyoto."
OTHER_FACTS = ["Mateo Rossi is a citizen of Chile.", "Mateo Rossi works for Airbus."]
MATEO = frozenset({"mateo", "rossi"})


@pytest.mark.parametrize(
    ("newer_matched", "first"),
    [
        # The question names what the two share: the newer passes every other fact of it.
        (MATEO | {"live"}, LIVES_NOW),
        # The question does not name Mateo Rossi: the newer moves no further than the reach.
        (frozenset({"live"}), LIVES_WAS),
    ],
)
def test_the_same_relation_of_a_name_asked_about_goes_first_from_beyond_the_reach(
    newer_matched: frozenset[str], first: str
) -> None:
    texts = [LIVES_WAS, *OTHER_FACTS, LIVES_NOW]
    # The other facts were written first: only the two telling where he lives are versions.
    minutes = [2, 0, 1, 3]
    memories = [written(f"01{n}", text, n) for text, n in zip(texts, minutes, strict=True)]
    matched = [MATEO | {"live"}, MATEO, MATEO, newer_matched]
    reader = TableReader({(LIVES_NOW, LIVES_WAS): True})
    order = newer_first(
        [0, 1, 2, 3],
        memories,
        [0.9, 0.8, 0.8, 0.7],
        [0, 0, 0, 0],
        band=0.15,
        reach=2,
        matched=matched,
        relations=reader,
    )
    assert texts[order[0]] == first
    assert len(order) == 4
    # Past the reach, the model is asked only where the question names what the two share.
    assert reader.named.get((LIVES_NOW, LIVES_WAS)) is (True if first == LIVES_NOW else None)
