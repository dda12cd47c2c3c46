"""Table tests of the pure fold: what is absorbed, what the watermark becomes, what is counted."""

from __future__ import annotations

import random

import pytest

from shared.counters.fold import SummedCounts, absorb, combine, merge, total_counts
from shared.model.counters import AccessCount, MergedCounters
from shared.storage.shardlog import absorbable_names, fresh_names
from tests.counters._names import name_at

Counts = dict[str, AccessCount]

LAG_MS = 60_000
NOW_MS = 1_800_000_000_000
T0 = "2027-01-15T08:00:00.000Z"
T1 = "2027-01-15T08:00:01.000Z"
T2 = "2027-01-15T09:00:00.000Z"


def count(access: int, last_at: str = T0) -> AccessCount:
    return AccessCount(access=access, last_at=last_at)


def fold(
    merged: MergedCounters, shards: dict[str, Counts], *, now_ms: int, lag_ms: int
) -> tuple[MergedCounters, tuple[str, ...]]:
    """The pure step of ``COUNTER_LOG.fold`` (shared.storage.shardlog): the absorbable shards added
    to ``merged``, and their names; ``merged`` itself when none is absorbable."""
    absorbed = absorbable_names(shards, watermark=merged.watermark, now_ms=now_ms, lag_ms=lag_ms)
    if not absorbed:
        return merged, ()
    return absorb(merged, shards, absorbed), tuple(absorbed)


OLD = name_at(NOW_MS - LAG_MS - 1)
OLDER = name_at(NOW_MS - LAG_MS - 5_000)
AT_CUTOFF = name_at(NOW_MS - LAG_MS)
YOUNG = name_at(NOW_MS - LAG_MS + 1)
NEWEST = name_at(NOW_MS)
SAME_MS_A = name_at(NOW_MS - 2 * LAG_MS, "a")
SAME_MS_B = name_at(NOW_MS - 2 * LAG_MS, "b")
NOT_A_ULID = "not-a-ulid-at-all-000000000-p1.json"


@pytest.mark.parametrize(
    ("merged", "shards", "expected_counts", "expected_watermark", "expected_absorbed"),
    [
        pytest.param(MergedCounters(), {}, {}, "", (), id="nothing"),
        pytest.param(
            MergedCounters(), {OLD: {"m": count(2)}}, {"m": count(2)}, OLD, (OLD,), id="one-old"
        ),
        pytest.param(MergedCounters(), {YOUNG: {"m": count(2)}}, {}, "", (), id="younger-than-lag"),
        pytest.param(
            MergedCounters(),
            {AT_CUTOFF: {"m": count(1)}},
            {"m": count(1)},
            AT_CUTOFF,
            (AT_CUTOFF,),
            id="exactly-lag-old-is-absorbed",
        ),
        pytest.param(
            MergedCounters(counts={"m": count(5)}, watermark=OLDER),
            {OLDER: {"m": count(100)}, OLD: {"m": count(1, T1)}, YOUNG: {"m": count(7)}},
            {"m": count(6, T1)},
            OLD,
            (OLD,),
            id="at-watermark-ignored-young-kept",
        ),
        pytest.param(
            MergedCounters(),
            {SAME_MS_B: {"x": count(1)}, SAME_MS_A: {"x": count(1, T2)}},
            {"x": count(2, T2)},
            SAME_MS_B,
            (SAME_MS_A, SAME_MS_B),
            id="same-millisecond-two-processes",
        ),
        pytest.param(
            MergedCounters(),
            {NOT_A_ULID: {"m": count(3)}, OLD: {"n": count(1)}},
            {"n": count(1)},
            OLD,
            (OLD,),
            id="unparseable-name-never-absorbed",
        ),
        pytest.param(
            MergedCounters(counts={"a": count(1, T2)}, watermark=""),
            {OLDER: {"a": count(1, T0), "b": count(4)}, OLD: {"b": count(1, T1)}},
            {"a": count(2, T2), "b": count(5, T1)},
            OLD,
            (OLDER, OLD),
            id="counts-add-last-at-takes-later",
        ),
    ],
)
def test_fold_table(
    merged: MergedCounters,
    shards: dict[str, dict[str, AccessCount]],
    expected_counts: dict[str, AccessCount],
    expected_watermark: str,
    expected_absorbed: tuple[str, ...],
) -> None:
    folded, absorbed = fold(merged, shards, now_ms=NOW_MS, lag_ms=LAG_MS)
    assert absorbed == expected_absorbed
    if expected_absorbed:
        assert folded.counts == expected_counts
        assert folded.watermark == expected_watermark
    else:
        assert folded is merged


@pytest.mark.parametrize(
    ("names", "watermark", "expected"),
    [
        ([NEWEST, OLD, OLDER], "", [OLDER, OLD]),
        ([NEWEST, OLD, OLDER], OLDER, [OLD]),
        ([NEWEST, OLD, OLDER], OLD, []),
        ([YOUNG, AT_CUTOFF], "", [AT_CUTOFF]),
        ([NOT_A_ULID], "", []),
    ],
)
def test_absorbable_names(names: list[str], watermark: str, expected: list[str]) -> None:
    assert absorbable_names(names, watermark=watermark, now_ms=NOW_MS, lag_ms=LAG_MS) == expected


def test_fresh_names_are_strictly_above_the_watermark_and_sorted() -> None:
    assert fresh_names([NEWEST, OLD, OLDER], watermark=OLDER) == [OLD, NEWEST]


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (None, count(1, T0), count(1, T0)),
        (count(2, T0), count(3, T1), count(5, T1)),
        (count(2, T2), count(3, T1), count(5, T2)),
    ],
)
def test_combine(left: AccessCount | None, right: AccessCount, expected: AccessCount) -> None:
    assert combine(left, right) == expected


def test_merge_converges_in_any_order() -> None:
    parts = [{"a": count(1, T1)}, {"a": count(2, T0), "b": count(1)}, {"b": count(3, T2)}]
    expected = {"a": count(3, T1), "b": count(4, T2)}
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        assert merge(*(parts[i] for i in order)) == expected


def test_summed_counts_reads_as_the_merge_of_its_parts() -> None:
    parts = [{"a": count(1, T1)}, {}, {"a": count(2, T0), "b": count(1)}, {"b": count(3, T2)}]
    summed = SummedCounts(*parts)
    merged = merge(*parts)
    assert summed == merged
    assert len(summed) == 2 and sorted(summed) == ["a", "b"]
    assert summed["a"] == count(3, T1) and summed.get("b") == count(4, T2)
    assert summed.get("never") is None and "never" not in summed
    with pytest.raises(KeyError):
        summed["never"]
    assert SummedCounts() == {} and len(SummedCounts({}, {})) == 0
    assert dict(SummedCounts({"a": count(1)})) == {"a": count(1)}


def test_total_counts_reads_merged_plus_shards_above_the_watermark_only() -> None:
    merged = MergedCounters(counts={"m": count(10)}, watermark=OLD)
    shards = {OLDER: {"m": count(100)}, OLD: {"m": count(100)}, NEWEST: {"m": count(1, T1)}}
    assert total_counts(merged, shards) == {"m": count(11, T1)}


def test_a_clock_fifty_seconds_behind_is_never_folded_early_nor_lost() -> None:
    """A process 50 s behind stamps its shard 50 s in the past, and the store accepts it now.

    Folds running every second up to then must leave the watermark below its name, so that once
    visible it is counted, and a later fold absorbs it exactly once.
    """
    real_ms = NOW_MS
    late = name_at(real_ms - 50_000, "slow")
    visible = {name_at(real_ms - s * 1000, "fast"): {"m": count(1)} for s in range(1, 120)}
    merged = MergedCounters()
    for t_ms in range(real_ms - 30_000, real_ms, 1_000):
        # The late shard is not visible yet: folds see only the others.
        seen = {n: d for n, d in visible.items() if n <= name_at(t_ms, "~")}
        merged, _ = fold(merged, seen, now_ms=t_ms, lag_ms=LAG_MS)
    assert merged.watermark < late
    everything = {**visible, late: {"m": count(1)}}
    assert total_counts(merged, everything)["m"].access == len(everything)
    final, _ = fold(merged, everything, now_ms=real_ms + 10 * LAG_MS, lag_ms=LAG_MS)
    assert final.counts["m"].access == len(everything)


@pytest.mark.parametrize("seed", range(20))
def test_random_folds_never_double_nor_drop_a_shard_that_lands_within_the_lag(seed: int) -> None:
    rng = random.Random(seed)
    landed: dict[str, dict[str, AccessCount]] = {}
    in_flight: list[tuple[int, str]] = []
    merged = MergedCounters()
    written = 0
    for step in range(300):
        now_ms = NOW_MS + step * 1_000
        skew_ms = rng.choice([0, 0, -50_000, 2_000])
        name = name_at(now_ms + skew_ms, f"p{rng.randrange(4)}", suffix=step)
        written += 1
        # Lands somewhere within the lag (minus the worst skew) of being stamped.
        in_flight.append((now_ms + rng.randrange(0, 9_000), name))
        for due_ms, pending in [entry for entry in in_flight if entry[0] <= now_ms]:
            landed[pending] = {"m": count(1)}
            in_flight.remove((due_ms, pending))
        if rng.random() < 0.3:
            merged, absorbed_names = fold(merged, landed, now_ms=now_ms, lag_ms=LAG_MS)
            for absorbed in absorbed_names:
                if rng.random() < 0.7:  # the rest are left behind, as after a crash
                    del landed[absorbed]
        assert sum(c.access for c in total_counts(merged, landed).values()) <= written
    for _, pending in in_flight:
        landed[pending] = {"m": count(1)}
    assert total_counts(merged, landed)["m"].access == written
