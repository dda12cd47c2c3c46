"""The keyword leg's pseudo-relevance feedback, table-tested: which terms the best results
give the query, at what weight, and what asking again with them changes (pure, no I/O)."""

from __future__ import annotations

import pytest

from shared.lexical import KeywordQuery, LexicalIndex, terms
from shared.lexical.feedback import (
    FEEDBACK_MEMORIES,
    FEEDBACK_MIN_COUNT,
    FEEDBACK_TERMS,
    FEEDBACK_WEIGHT,
    feedback_terms,
)
from shared.lexical.scoring import K1, B
from shared.lexical.segments import passage_counts
from shared.model.tokens import names

CHAT = {
    "q1": "How do I stop the gunicorn workers timing out behind nginx?",
    "a1": "Raise proxy_read_timeout in nginx and gunicorn --timeout; gunicorn workers "
    "then outlive the slow upstream, and nginx keeps the upstream socket open.",
    "u2": "hmm, and what if I test from another port?",
    "a2": "Then the upstream block must list that port: nginx proxies only to the upstream "
    "it knows, so gunicorn on port 8001 needs its own upstream line.",
    "x1": "The grocery list: apples, bread, coffee beans and oat milk.",
    "x2": "Lunch was a sandwich with coffee in the park.",
}


def index_of(memories: dict[str, str]) -> LexicalIndex:
    index = LexicalIndex()
    for memory_id, text in memories.items():
        index.add(memory_id, passage_counts(text))
    return index


def asked(index: LexicalIndex, query: str) -> dict[str, float]:
    return {t: index.weight(t) for t in terms(query)}


def test_the_terms_the_best_results_repeat_are_added_and_the_query_own_are_not() -> None:
    index = index_of(CHAT)
    extra = feedback_terms(index, ["a1", "a2"], asked(index, "gunicorn timeout"))
    assert "upstream" in extra and "nginx" in extra  # repeated across the feedback
    assert "gunicorn" not in extra and "timeout" not in extra  # the query's own
    assert max(extra.values()) == pytest.approx(FEEDBACK_WEIGHT)
    assert all(0 < w <= FEEDBACK_WEIGHT for w in extra.values())
    assert len(extra) <= FEEDBACK_TERMS


@pytest.mark.parametrize(
    ("feedback", "expected"),
    [
        # a term counted once among the feedback is a one-off word, not the subject
        (["x1"], set()),
        # coffee occurs once in each of two memories: twice in all
        (["x1", "x2"], {"coffe"}),
        # nothing to learn from
        ([], set()),
        (["unknown"], set()),
    ],
)
def test_a_term_must_occur_at_least_twice_among_the_feedback(
    feedback: list[str], expected: set[str]
) -> None:
    index = index_of(CHAT)
    assert set(feedback_terms(index, feedback, asked(index, "lunch"))) == expected


def test_only_the_first_feedback_memories_count() -> None:
    memories = {f"m{i}": "filler words here" for i in range(FEEDBACK_MEMORIES)}
    memories["late"] = "zebra zebra zebra"
    index = index_of(memories)
    order = [*memories]
    assert "zebra" not in feedback_terms(index, order, {})
    assert "zebra" in feedback_terms(index, order[-1:], {})


def every_term_weighed(
    index: LexicalIndex, feedback: list[str], asked: dict[str, float]
) -> dict[str, float]:
    """The feedback's terms worked out the plain way: every term that may be taken weighed."""
    shares: dict[str, float] = {}
    occurred: dict[str, int] = {}
    for memory_id in feedback[:FEEDBACK_MEMORIES]:
        ids, counts = index.counted(memory_id)
        total = int(counts.sum())
        for term_id, count in zip(ids.tolist(), counts.tolist(), strict=True):
            term = index.term(term_id)
            shares[term] = shares.get(term, 0.0) + count / total
            occurred[term] = occurred.get(term, 0) + count
    scores = {
        term: share * index.weight(term)
        for term, share in shares.items()
        if occurred[term] >= FEEDBACK_MIN_COUNT and term not in asked
    }
    chosen = sorted(scores, key=scores.__getitem__, reverse=True)[:FEEDBACK_TERMS]
    return {term: FEEDBACK_WEIGHT * scores[term] / scores[chosen[0]] for term in chosen}


def test_the_terms_chosen_are_those_of_weighing_every_term() -> None:
    """Terms whose share even the highest IDF cannot lift into the best are not weighed; the
    choice, its order and its weights are the same as when every one is. Here the words every
    memory holds have the largest shares and lose to rarer words with smaller ones."""
    rare = [f"rare{i} rare{i} " for i in range(14)]
    memories = {
        f"m{i}": "the deploy job runs the build then the tests " * (i + 1) + rare[i] + rare[i + 1]
        for i in range(12)
    }
    memories |= {f"x{i}": "the deploy job the build " * 3 for i in range(40)}
    index = index_of(memories)
    for feedback in ([f"m{i}" for i in range(8)], ["m11", "m3", "x1", "m7"], ["x1", "x2"]):
        query = asked(index, "deploy")
        expected = every_term_weighed(index, feedback, query)
        extra = feedback_terms(index, feedback, query)
        assert list(extra) == list(expected)
        assert extra == pytest.approx(expected)


def test_the_feedback_lifts_a_turn_that_shares_no_word_with_the_query() -> None:
    index = index_of(CHAT)
    query = "gunicorn timeout"
    scored = KeywordQuery(index, terms(query), names=names(query))
    first = {h.memory_id: h.score for h in scored.result(top_k=10).hits}
    assert "u2" not in first
    again = scored.fed_back(["a1", "q1", "a2"], ["a2", "u2", "x1"])
    # a2 shares "upstream", "nginx", "port" with the feedback: its score grows; the grocery
    # list shares nothing and stays unscored
    assert again["a2"] > first["a2"] and "x1" not in again


def test_a_candidate_the_query_missed_is_scored_by_the_feedback_alone() -> None:
    index = index_of({**CHAT, "u3": "The upstream upstream nginx block"})
    scored = KeywordQuery(index, terms("gunicorn"), names=())
    assert "u3" not in {h.memory_id for h in scored.result(top_k=10).hits}
    assert scored.fed_back(["a1", "a2"], ["u3"])["u3"] > 0


def test_only_the_candidates_are_scored() -> None:
    """The feedback reorders what the two legs found; it does not search again."""
    index = index_of(CHAT)
    scored = KeywordQuery(index, terms("gunicorn timeout"), names=())
    assert set(scored.fed_back(["a1", "q1", "a2"], ["a1", "x1"])) == {"a1"}


def test_a_memory_keeps_its_best_passage() -> None:
    """The feedback's terms add to the passage that holds them, not across passages: "apart"
    holds the query's word in one passage and the feedback's in another, "together" in one."""
    index = index_of(CHAT)
    index.add("apart", [{"gunicorn": 3}, {"nginx": 1, "upstream": 1}])
    index.add("together", [{"gunicorn": 3, "nginx": 1, "upstream": 1}])
    scored = KeywordQuery(index, ["gunicorn"], names=())
    own = {h.memory_id: h.score for h in scored.result(top_k=10).hits}
    again = scored.fed_back(["a1", "a2"], ["apart", "together"])
    assert again["apart"] == pytest.approx(own["apart"])
    assert again["together"] > own["together"]


def test_no_feedback_term_leaves_nothing_to_rescore() -> None:
    index = index_of(CHAT)
    scored = KeywordQuery(index, terms("lunch"), names=())
    assert scored.fed_back(["x2"], ["x1", "x2"]) == {}


def test_a_skipped_memory_stays_out_after_the_feedback() -> None:
    index = index_of(CHAT)
    scored = KeywordQuery(index, terms("gunicorn"), names=(), skip={"a2"})
    assert "a2" not in scored.fed_back(["a1", "q1"], ["a1", "a2"])


def added_term_by_term(
    index: LexicalIndex, extra: dict[str, float], members: set[int]
) -> dict[int, float]:
    """What each passage of the ``members`` gains from the ``extra`` terms, one posting at a
    time in the terms' order: the sums the feedback's arrays must give to the bit."""
    slots = index._slots
    average = index._total_length / len(index._lengths)
    added: dict[int, float] = {}
    for term, weight in extra.items():
        idf = weight * index.weight(term)
        for key, count in index._postings[term].items():
            slot = slots.slot_of[key]
            if int(slots.owners[slot]) in members:
                norm = K1 * (1 - B + B * float(slots.lengths[slot]) / average)
                added[slot] = added.get(slot, 0.0) + idf * count * (K1 + 1) / (count + norm)
    return added


def test_the_terms_added_sum_as_one_posting_at_a_time_would() -> None:
    index = index_of(CHAT)
    index.add("long", [{"nginx": 2, "upstream": 1}, {"port": 3, "gunicorn": 1}, {"nginx": 1}])
    index.add("short", [{"upstream": 4}])
    scored = KeywordQuery(index, terms("gunicorn timeout"), names=())
    slot_of = index._slots.slot_of
    weights = {"upstream": 0.3, "nginx": 0.21, "port": 0.07, "coffee": 0.05}
    extra = {next(iter(terms(word))): weight for word, weight in weights.items()}
    for chosen in (["a1", "a2", "long", "short", "x1"], ["long"], ["x2"], []):
        members = [slot_of[memory_id] for memory_id in chosen]
        added, touched = scored._added(extra, members)
        expected = added_term_by_term(index, extra, set(members))
        assert touched == sorted(expected)
        assert [added[slot] for slot in touched] == [expected[slot] for slot in touched]
