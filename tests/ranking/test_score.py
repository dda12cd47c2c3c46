"""Recall ranking rules, table-tested on hand-built hits (no I/O, clock injected)."""

from __future__ import annotations

import pytest

from shared.model import Hit, Memory, MemoryType
from shared.model.counters import ZERO_COUNT, AccessCount
from shared.model.ids import iso_ms
from shared.ranking import MODE_PROFILES, confidence_of, rank, trust
from shared.ranking.score import DAY_MS

NOW_MS = 1_800_000_000_000


def hit(
    memory_id: str,
    similarity: float,
    *,
    age_days: float = 0,
    memory_type: MemoryType = "project",
    scope: str = "project",
) -> Hit:
    created = iso_ms(NOW_MS - int(age_days * DAY_MS))
    memory = Memory(
        id=memory_id,
        tenant="t",
        content=f"content {memory_id}",
        memory_type=memory_type,
        created_at=created,
        scope=scope,  # type: ignore[arg-type]
    )
    return Hit(memory=memory, similarity=similarity)


@pytest.mark.parametrize(
    ("similarity", "floor", "expected"),
    [
        (0.33, 0.1, "high"),
        (0.15, 0.1, "medium"),
        (0.9, 0.7, "medium"),
        (None, 0.1, "low"),
    ],
)
def test_confidence_is_a_multiple_of_the_floor(
    similarity: float | None, floor: float, expected: str
) -> None:
    assert confidence_of(similarity, floor=floor) == expected


def test_single_fresh_unused_hit_scores_by_mode_weights() -> None:
    scores = {
        mode: rank(
            [hit("a", 0.5)], {}, profile=MODE_PROFILES[mode], limit=5, floor=0.1, now_ms=NOW_MS
        )
        .results[0]
        .score
        for mode in MODE_PROFILES
    }
    assert scores == pytest.approx({"precision": 1.05, "balanced": 1.0, "exploratory": 0.9})


def test_floor_and_fraction_of_top_gate_and_count_what_they_drop() -> None:
    hits = [hit("top", 0.50), hit("near", 0.31), hit("far", 0.29), hit("below", 0.05)]
    outcome = rank(hits, {}, profile=MODE_PROFILES["balanced"], limit=5, floor=0.1, now_ms=NOW_MS)
    # balanced keeps >= 0.6 x 0.50 = 0.30: "far" is ratio-gated, "below" is under the floor.
    assert [r.memory.id for r in outcome.results] == ["top", "near"]
    assert outcome.gated == 2


def test_nothing_above_the_floor_returns_no_results_and_counts_all_gated() -> None:
    outcome = rank(
        [hit("a", 0.05), hit("b", 0.02)],
        {},
        profile=MODE_PROFILES["balanced"],
        limit=5,
        floor=0.1,
        now_ms=NOW_MS,
    )
    assert outcome.results == ()
    assert outcome.gated == 2
    assert outcome.confidence == "low"


def test_store_order_does_not_matter_top_is_a_maximum() -> None:
    hits = [hit("b", 0.40), hit("a", 0.60), hit("c", 0.45)]
    outcome = rank(hits, {}, profile=MODE_PROFILES["balanced"], limit=5, floor=0.1, now_ms=NOW_MS)
    assert [r.memory.id for r in outcome.results] == ["a", "c", "b"]


def test_recency_breaks_a_similarity_tie_towards_the_newer_memory() -> None:
    hits = [hit("old", 0.50, age_days=90), hit("new", 0.50, age_days=1)]
    outcome = rank(hits, {}, profile=MODE_PROFILES["balanced"], limit=5, floor=0.1, now_ms=NOW_MS)
    assert [r.memory.id for r in outcome.results] == ["new", "old"]


def test_access_counts_lift_a_used_memory_over_an_equal_unused_one() -> None:
    hits = [hit("unused", 0.50, age_days=10), hit("used", 0.50, age_days=10)]
    counts = {"used": AccessCount(access=9, last_at=iso_ms(NOW_MS - 10 * DAY_MS))}
    outcome = rank(
        hits, counts, profile=MODE_PROFILES["exploratory"], limit=5, floor=0.1, now_ms=NOW_MS
    )
    assert [r.memory.id for r in outcome.results] == ["used", "unused"]


def test_limit_cuts_after_sorting() -> None:
    hits = [hit(str(i), 0.5 + i / 100) for i in range(10)]
    outcome = rank(hits, {}, profile=MODE_PROFILES["precision"], limit=3, floor=0.1, now_ms=NOW_MS)
    assert [r.memory.id for r in outcome.results] == ["9", "8", "7"]


def test_scope_does_not_change_the_score() -> None:
    a = rank(
        [hit("a", 0.5)], {}, profile=MODE_PROFILES["balanced"], limit=1, floor=0.1, now_ms=NOW_MS
    )
    b = rank(
        [hit("a", 0.5, scope="conversation")],
        {},
        profile=MODE_PROFILES["balanced"],
        limit=1,
        floor=0.1,
        now_ms=NOW_MS,
    )
    assert a.results[0].score == b.results[0].score


@pytest.mark.parametrize(
    ("memory_type", "age_days", "expected"),
    [
        ("project", 180, 0.5),
        ("reference", 120, 0.5),
        ("pattern", 60, 0.5),
        ("conversation", 30, 0.5),
        ("project", 0, 1.0),
    ],
)
def test_trust_halves_at_the_type_half_life(
    memory_type: MemoryType, age_days: float, expected: float
) -> None:
    memory = hit("x", 0.5, memory_type=memory_type).memory
    assert trust(memory, ZERO_COUNT, age_days=age_days) == pytest.approx(expected)


def test_use_slows_trust_decay_but_never_lifts_it_above_base() -> None:
    memory = hit("x", 0.5).memory
    used = AccessCount(access=50, last_at="")
    assert trust(memory, used, age_days=180) > trust(memory, ZERO_COUNT, age_days=180)
    assert trust(memory, used, age_days=0) == 1.0


def test_unparseable_timestamp_sinks_rather_than_nan() -> None:
    broken = Hit(
        memory=Memory(id="bad", tenant="t", content="c", created_at="not a date"),
        similarity=0.5,
    )
    outcome = rank(
        [broken, hit("ok", 0.5)],
        {},
        profile=MODE_PROFILES["balanced"],
        limit=5,
        floor=0.1,
        now_ms=NOW_MS,
    )
    assert [r.memory.id for r in outcome.results] == ["ok", "bad"]
    assert all(r.score == r.score for r in outcome.results)  # no NaN
