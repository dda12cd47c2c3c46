"""TenantSnapshot's arithmetic on vectors small enough to check by hand."""

from __future__ import annotations

import gc
import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from shared.errors import InvariantError
from shared.model import Memory
from shared.storage.postgres.scan.snapshot import (
    SnapshotRow,
    TenantSnapshot,
    decode_vector,
    vector_width,
)
from shared.storage.postgres.scan.workers import ScanWorkers


def row(name: str, readable: bool = True) -> SnapshotRow:
    memory = Memory(id=name, tenant="acme", content=name, created_at="2026-01-01T00:00:00.000Z")
    return SnapshotRow(id=name, memory=memory if readable else None, stored_bytes=10)


def test_rows_and_their_memories_are_not_tracked_by_the_garbage_collector() -> None:
    # A tags tuple built at run time is itself tracked; the memory holding it still is not.
    tags = tuple(f"tag-{number}" for number in range(2))
    assert gc.is_tracked(tags)
    memory = Memory(id="m", tenant="acme", content="c", tags=tags, created_at="2026-01-01")
    assert not gc.is_tracked(memory)
    assert not gc.is_tracked(SnapshotRow(id="m", memory=memory, stored_bytes=10))
    assert not gc.is_tracked(row("unreadable", readable=False))


def snapshot(
    vectors: dict[str, list[float]], unreadable: frozenset[str] = frozenset()
) -> TenantSnapshot:
    rows = [row(name, name not in unreadable) for name in vectors]
    matrix = np.array(list(vectors.values()), dtype=np.float32)
    return TenantSnapshot.build(1, matrix.shape[1], rows, matrix)


def names(snap: TenantSnapshot, query: list[float], top_k: int) -> list[tuple[str, float]]:
    return [
        (hit.memory.id, round(hit.similarity, 4))
        for hit in snap.nearest(np.array(query, dtype=np.float32), top_k)
    ]


def test_rows_rank_by_cosine_whatever_their_length() -> None:
    snap = snapshot({"east": [5, 0], "north-east": [1, 1], "north": [0, 0.2], "west": [-3, 0]})
    assert names(snap, [1, 0], 4) == [
        ("east", 1.0),
        ("north-east", 0.7071),
        ("north", 0.0),
        ("west", -1.0),
    ]
    assert names(snap, [1, 0], 2) == [("east", 1.0), ("north-east", 0.7071)]


def test_a_zero_vector_comes_last_with_similarity_zero() -> None:
    snap = snapshot({"zero": [0, 0], "west": [-1, 0], "east": [1, 0]})
    assert names(snap, [1, 0], 3) == [("east", 1.0), ("west", -1.0), ("zero", 0.0)]


def test_an_unreadable_row_keeps_its_slot_and_is_left_out() -> None:
    snap = snapshot({"a": [1, 0], "broken": [1, 0.1], "c": [1, 0.5]}, frozenset({"broken"}))
    # The SQL scan takes the top 2 rows, then drops the one it cannot read.
    assert names(snap, [1, 0], 2) == [("a", 1.0)]


def test_changed_keeps_the_rows_still_there_and_appends_the_new() -> None:
    snap = snapshot({"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    later = snap.changed(
        2,
        removed_ids=frozenset({"b"}),
        added=[row("d")],
        added_vectors=np.array([[-1, 0]], dtype=np.float32),
    )
    assert later.generation == 2 and later.ids() == {"a", "c", "d"}
    assert names(later, [1, 0], 5) == [("a", 1.0), ("c", 0.7071), ("d", -1.0)]
    assert later.rows[0] is snap.rows[0]


def test_a_query_of_another_width_or_no_direction_is_refused() -> None:
    snap = snapshot({"a": [1, 0]})
    with pytest.raises(InvariantError, match="width"):
        snap.nearest(np.array([1, 0, 0], dtype=np.float32), 1)
    with pytest.raises(InvariantError, match="non-zero"):
        snap.nearest(np.array([0, 0], dtype=np.float32), 1)


def test_pgvector_binary_vectors_decode_to_their_values() -> None:
    raw = (3).to_bytes(2, "big") + b"\x00\x00" + np.array([1.5, -2, 0], dtype=">f4").tobytes()
    assert vector_width(raw) == 3
    native = np.empty(3, dtype=np.float32)
    native[:] = decode_vector(raw)  # how a refresh copies it into its matrix
    assert native.tolist() == [1.5, -2.0, 0.0]


def test_an_owned_matrix_is_scaled_in_place_and_a_lent_one_is_not() -> None:
    rows = [row("a"), row("b"), row("zero")]
    lent = np.array([[3, 4], [0, 2], [0, 0]], dtype=np.float32)
    snap = TenantSnapshot.build(1, 2, rows, lent)
    assert lent.tolist() == [[3, 4], [0, 2], [0, 0]]
    owned = lent.copy()
    mine = TenantSnapshot.build(1, 2, rows, owned, owned=True)
    assert np.shares_memory(mine.unit_matrix, owned)
    assert np.array_equal(mine.unit_matrix, snap.unit_matrix)
    assert np.allclose(snap.unit_matrix, np.array([[0.6, 0.8], [0, 1], [0, 0]]))
    assert snap.has_direction.tolist() == [True, True, False]


def test_a_changed_snapshot_drops_and_appends_without_touching_the_old_one() -> None:
    old = snapshot({"a": [1, 0], "b": [0, 1], "c": [1, 1]})
    before = old.unit_matrix.copy()
    new = old.changed(
        2,
        removed_ids=frozenset({"b"}),
        added=[row("d")],
        added_vectors=np.array([[0, 5]], dtype=np.float32),
        owned=True,
    )
    assert [r.id for r in new.rows] == ["a", "c", "d"]
    assert new.unit_matrix.tolist() == [before[0].tolist(), before[2].tolist(), [0.0, 1.0]]
    assert np.array_equal(old.unit_matrix, before) and len(old.rows) == 3


def appended(old: TenantSnapshot, name: str, vector: list[float]) -> TenantSnapshot:
    return old.changed(
        old.generation + 1,
        removed_ids=frozenset({name}),  # as the store's put passes its own new id
        added=[row(name)],
        added_vectors=np.array([vector], dtype=np.float32),
    )


def test_appends_go_behind_what_older_snapshots_see_and_never_change_them() -> None:
    first = snapshot({"a": [1, 0], "b": [0, 1]})
    second = appended(first, "c", [1, 1])  # copies once, with room to spare
    third = appended(second, "d", [-1, 0])  # appended in that room
    assert np.shares_memory(third.unit_matrix, second.unit_matrix)
    assert [r.id for r in second.rows] == ["a", "b", "c"]
    assert [r.id for r in third.rows] == ["a", "b", "c", "d"]
    assert names(second, [-1, 0], 5) == [("b", 0.0), ("c", -0.7071), ("a", -1.0)]
    assert names(third, [-1, 0], 5) == [("d", 1.0), ("b", 0.0), ("c", -0.7071), ("a", -1.0)]
    assert second.ids() == {"a", "b", "c"} and third.ids() == {"a", "b", "c", "d"}


def test_a_snapshot_that_is_no_longer_the_newest_copies_instead_of_appending() -> None:
    base = appended(snapshot({"a": [1, 0]}), "b", [0, 1])
    ahead = appended(base, "c", [1, 1])
    # A second change of ``base`` (a refresh racing a write) must not write where ``ahead``
    # keeps its row "c".
    aside = appended(base, "x", [-1, 0])
    assert not np.shares_memory(aside.unit_matrix, ahead.unit_matrix)
    assert [r.id for r in ahead.rows] == ["a", "b", "c"]
    assert [r.id for r in aside.rows] == ["a", "b", "x"]
    assert names(ahead, [1, 1], 1) == [("c", 1.0)]
    assert names(aside, [-1, 0], 1) == [("x", 1.0)]


def test_changes_racing_from_one_snapshot_each_get_their_own_rows() -> None:
    base = appended(snapshot({"a": [1, 0]}), "b", [0, 1])
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: appended(base, f"x{i}", [float(i + 1), 1.0]), range(32)))
    for i, result in enumerate(results):
        assert [r.id for r in result.rows] == ["a", "b", f"x{i}"]
        expected = np.array([i + 1, 1.0]) / np.hypot(i + 1, 1.0)
        assert np.allclose(result.unit_matrix[2], expected)
    # At most one of them appended in place; the rest copied.
    assert sum(np.shares_memory(r.unit_matrix, base.unit_matrix) for r in results) <= 1


def test_removing_a_row_held_copies_and_an_unknown_id_removes_nothing() -> None:
    snap = appended(snapshot({"a": [1, 0], "b": [0, 1]}), "c", [1, 1])
    # "c" is in the store's positions beyond ``older``'s rows: not one of older's.
    older = snapshot({"a": [1, 0], "b": [0, 1]})
    kept = older.changed(2, removed_ids=frozenset({"c", "nope"}))
    assert [r.id for r in kept.rows] == ["a", "b"]
    fewer = snap.changed(3, removed_ids=frozenset({"b"}))
    assert [r.id for r in fewer.rows] == ["a", "c"]
    assert names(fewer, [0, 1], 5) == [("c", 0.7071), ("a", 0.0)]
    assert [r.id for r in snap.rows] == ["a", "b", "c"]
    assert names(snap, [0, 1], 1) == [("b", 1.0)]


def test_a_long_run_of_appends_matches_a_snapshot_built_at_once() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((300, 8)).astype(np.float32)
    vectors[17] = 0
    grown = snapshot({"m000": vectors[0].tolist()})
    for i in range(1, 300):
        grown = appended(grown, f"m{i:03d}", vectors[i].tolist())
    whole = TenantSnapshot.build(9, 8, [row(f"m{i:03d}") for i in range(300)], vectors)
    assert np.array_equal(grown.unit_matrix, whole.unit_matrix)
    assert np.array_equal(grown.has_direction, whole.has_direction)
    assert grown.all_directed is whole.all_directed is False
    query = rng.standard_normal(8).astype(np.float32)
    assert names(grown, query.tolist(), 300) == names(whole, query.tolist(), 300)
    # Held bytes count the spare room: never less than what the rows themselves need.
    assert grown.nbytes >= whole.nbytes


@pytest.mark.parametrize(("threads", "rows"), [(2, 10_000), (4, 20_000), (2, 3_000), (1, 9_000)])
def test_scan_parts_cover_every_row_once_in_whole_blocks(threads: int, rows: int) -> None:
    workers = ScanWorkers(threads)
    try:
        parts = workers.parts(rows)
    finally:
        workers.close()
    assert parts[0][0] == 0 and parts[-1][1] == rows
    assert all(stop == start for (_, stop), (start, _) in itertools.pairwise(parts))
    assert all(start % 1024 == 0 for start, _ in parts)
    # Parts are only made when each has thousands of rows to scan.
    assert len(parts) == (1 if rows < 8192 or threads == 1 else threads)


def test_a_split_scan_answers_exactly_what_one_thread_answers() -> None:
    rng = np.random.default_rng(11)
    rows = [row(f"m{i:05d}") for i in range(10_000)]
    vectors = rng.standard_normal((10_000, 64)).astype(np.float32)
    vectors[1234] = 0  # a zero vector in the second part still sorts last
    snap = TenantSnapshot.build(1, 64, rows, vectors)
    workers = ScanWorkers(2)
    try:
        assert len(workers.parts(10_000)) == 2
        for query in rng.standard_normal((5, 64)).astype(np.float32):
            assert snap.nearest(query, 100, workers=workers) == snap.nearest(query, 100)
        everything = snap.nearest(vectors[0], 10_000, workers=workers)
    finally:
        workers.close()
    assert everything[-1].memory is not None and everything[-1].memory.id == "m01234"
    assert everything[-1].similarity == 0.0


def test_a_one_thread_scan_has_no_helpers() -> None:
    workers = ScanWorkers(1)
    assert workers.parts(50_000) == [(0, 50_000)]
    with pytest.raises(InvariantError, match="no helpers"):
        workers.submit(lambda: None)
    workers.close()
