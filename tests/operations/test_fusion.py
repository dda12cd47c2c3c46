"""Fusion of the two legs, table-tested: relevance per candidate, dedup by id, the bound."""

from __future__ import annotations

import pytest

from shared.lexical import KeywordHit, KeywordQuery, KeywordResult, LexicalIndex
from shared.lexical.segments import passage_counts
from shared.model import Hit, Memory
from shared.operations.fusion import KEYWORD_WEIGHT, fuse, fuse_again, with_feedback
from shared.operations.recall import RERANK_WINDOW, reranked


def hit(memory_id: str, similarity: float) -> Hit:
    memory = Memory(
        id=memory_id, tenant="t", content=memory_id, created_at="2026-01-01T00:00:00.000Z"
    )
    return Hit(memory=memory, similarity=similarity)


def keyword(*scored: tuple[str, float], spread: float = 2.0) -> KeywordResult:
    hits = tuple(
        KeywordHit(memory_id=m, score=s, matched=("w",), all_rare=False, coverage=0.5)
        for m, s in scored
    )
    return KeywordResult(hits=hits, spread=spread, documents=100)


FLOOR = 0.3
UNIT = KEYWORD_WEIGHT * FLOOR  # what one spread of BM25 adds


@pytest.mark.parametrize(
    ("hits", "scored", "expected"),
    [
        # vector only: relevance is the cosine
        ([("a", 0.6), ("b", 0.4)], [], {"a": 0.6, "b": 0.4}),
        # both legs: BM25 / spread in units of KEYWORD_WEIGHT x floor
        ([("a", 0.6), ("b", 0.4)], [("b", 4.0)], {"a": 0.6, "b": 0.4 + 2 * UNIT}),
        # keyword only: the lowest cosine the vector leg returned, plus its BM25
        ([("a", 0.6), ("b", 0.4)], [("c", 2.0)], {"a": 0.6, "b": 0.4, "c": 0.4 + UNIT}),
        # no vector hits at all (an empty snapshot): the bound is 0
        ([], [("c", 2.0)], {"c": UNIT}),
    ],
)
def test_relevance_per_candidate(
    hits: list[tuple[str, float]], scored: list[tuple[str, float]], expected: dict[str, float]
) -> None:
    fused = fuse([hit(*h) for h in hits], keyword(*scored), floor=FLOOR)
    assert {c.memory_id: c.relevance for c in fused} == pytest.approx(expected)


def test_each_memory_once_vector_leg_first_and_keyword_only_without_a_body() -> None:
    fused = fuse(
        [hit("a", 0.5), hit("a", 0.5), hit("b", 0.4)], keyword(("c", 1.0), ("a", 1.0)), floor=FLOOR
    )
    assert [c.memory_id for c in fused] == ["a", "b", "c"]
    # The vector leg's candidates carry their bodies; the keyword leg's own do not yet.
    assert [c.memory is not None for c in fused] == [True, True, False]
    assert fused[0].keyword is not None


def test_a_zero_spread_adds_nothing() -> None:
    """Every memory scored alike (or nothing matched): the keyword leg cannot rank them."""
    fused = fuse([hit("a", 0.5)], keyword(("a", 3.0), spread=0.0), floor=FLOOR)
    assert fused[0].relevance == pytest.approx(0.5)


def test_fused_again_each_candidate_keeps_its_first_relevance() -> None:
    hits = [hit("a", 0.6), hit("b", 0.4)]
    first = fuse(hits, keyword(("a", 2.0), ("c", 2.0)), floor=FLOOR)  # spread 2
    # the feedback's scores are read against the query's own spread
    again = fuse_again(first, {"a": 4.0, "b": 2.0, "c": 6.0}, spread=2.0, floor=FLOOR)
    by_id = {c.memory_id: c for c in again}
    assert by_id["a"].relevance == pytest.approx(0.6 + 2 * UNIT)
    assert by_id["a"].own_relevance == pytest.approx(0.6 + UNIT)
    assert by_id["b"].relevance == pytest.approx(0.4 + UNIT)
    assert by_id["b"].own_relevance == pytest.approx(0.4)
    # found by the keyword leg alone: the vector leg's bound, plus its score with the feedback
    assert by_id["c"].relevance == pytest.approx(0.4 + 3 * UNIT)
    assert by_id["c"].own_relevance == pytest.approx(0.4 + UNIT)
    assert first[0].asked is None and first[0].own_relevance == first[0].relevance


def test_fused_again_at_a_zero_spread_keeps_the_first_order() -> None:
    first = fuse([hit("a", 0.6), hit("b", 0.4)], None, floor=FLOOR)
    again = fuse_again(first, {"b": 9.0}, spread=0.0, floor=FLOOR)
    assert [c.relevance for c in again] == pytest.approx([0.6, 0.4])


def test_with_feedback_rescores_the_candidates_from_their_best() -> None:
    """The best candidate's shared terms lift the one that shares them and not the other."""
    index = LexicalIndex()
    index.add("a", passage_counts("gunicorn timeout behind nginx upstream, nginx upstream port"))
    index.add("b", passage_counts("the nginx upstream block lists the port"))
    index.add("c", passage_counts("grocery apples bread coffee"))
    index.add("d", passage_counts("lunch was a sandwich in the park"))
    scored = KeywordQuery(index, ["gunicorn"], names=())
    first = fuse(
        [hit("a", 0.6), hit("b", 0.4), hit("c", 0.4)], scored.result(top_k=10), floor=FLOOR
    )
    again = {c.memory_id: c for c in with_feedback(first, scored, floor=FLOOR)}
    assert again["b"].relevance > again["b"].own_relevance == pytest.approx(0.4)
    assert again["c"].relevance == pytest.approx(again["c"].own_relevance)


def test_with_feedback_and_nothing_to_add_keeps_the_candidates() -> None:
    index = LexicalIndex()
    index.add("a", passage_counts("lunch"))
    index.add("b", passage_counts("dinner"))
    scored = KeywordQuery(index, ["lunch"], names=())
    first = fuse([hit("a", 0.6), hit("b", 0.4)], scored.result(top_k=10), floor=FLOOR)
    assert with_feedback(first, scored, floor=FLOOR) == first


def test_only_the_candidates_that_could_still_be_returned_go_on() -> None:
    """Past ``limit × RERANK_WINDOW`` in rank's order (names held, then relevance) nothing goes
    on to the feedback; a memory holding the query's name goes on however low its relevance."""
    depth = 2 * RERANK_WINDOW
    hits = [hit(f"m{i:03}", 0.9 - i / 1000) for i in range(depth + 10)]
    named = KeywordHit(
        memory_id="m029", score=0.0, matched=("e1042",), all_rare=True, coverage=1.0, names=1
    )
    result = KeywordResult(hits=(named,), spread=0.0, documents=100)
    first = fuse(hits, result, floor=FLOOR)
    going_on = [c.memory_id for c in reranked(first, limit=2)]
    assert len(going_on) == depth
    assert "m029" in going_on  # the last of all by relevance, but it holds the name
    assert going_on[:-1] == [f"m{i:03}" for i in range(depth - 1)]  # then the best, in order
    assert reranked(first[:depth], limit=2) == first[:depth]
