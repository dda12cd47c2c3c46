"""BM25 over postings gives the same figures, to the bit, whether the walk is gathered by
counting over every slot (a walk long against the tenant: common words) or by sorting it."""

from __future__ import annotations

import math

import numpy as np

from shared.lexical.postings import Counts, Slots
from shared.lexical.scoring import matches


def _postings(
    draw: np.random.Generator, slots: int, terms: int, held: int
) -> list[tuple[Slots, Counts, float]]:
    return [
        (
            np.sort(draw.choice(slots, size=held, replace=False)).astype(np.int32),
            draw.integers(1, 5, size=held).astype(np.int32),
            float(draw.random() * 3),
        )
        for _ in range(terms)
    ]


def test_a_long_walk_and_a_short_one_score_alike() -> None:
    draw = np.random.default_rng(7)
    slots = 2_000
    postings = _postings(draw, slots, terms=5, held=400)
    lengths = draw.integers(5, 60, size=slots).astype(np.float64)
    # Two passages a memory for some: a memory keeps its best passage.
    owners = (np.arange(slots) // 2 * 2).astype(np.int32)
    dense = matches(postings, lengths, owners, average=30.0)
    # The same postings among many more slots never met: the walk is short against them.
    padding = 100_000
    sparse = matches(
        postings,
        np.concatenate([lengths, np.ones(padding)]),
        np.concatenate([owners, np.arange(slots, slots + padding, dtype=np.int32)]),
        average=30.0,
    )
    assert dense.ranked(50) == sparse.ranked(50)
    assert np.array_equal(dense.memories, sparse.memories)
    assert dense.scores.tobytes() == sparse.scores.tobytes()
    met = dense.memories.tolist()
    assert dense.passage_scores(met) == sparse.passage_scores(met)
    assert dense.spread(slots) == sparse.spread(slots)


def test_the_best_are_ranked_by_score_then_by_the_order_first_met() -> None:
    # Scores from few counts and one length tie often: the best are picked out before they are
    # sorted, and ties at the cut must still fall the way a sort of every match puts them.
    draw = np.random.default_rng(11)
    slots = 3_000
    postings = _postings(draw, slots, terms=3, held=1_500)
    lengths = np.full(slots, 20.0)
    found = matches(postings, lengths, np.arange(slots, dtype=np.int32), average=20.0)
    order = np.lexsort((found._memory_first, -found.scores))
    for top_k in (1, 5, 10, 100, 3_000):
        expected = [
            (int(found.memories[i]), float(found.scores[i])) for i in order[:top_k].tolist()
        ]
        assert found.ranked(top_k) == expected
    scores_met = found.scores[np.argsort(found._memory_first, kind="stable")].tolist()
    mean = sum(scores_met) / slots
    squares = sum(s * s for s in scores_met) / slots
    assert found.spread(slots) == math.sqrt(squares - mean * mean)
