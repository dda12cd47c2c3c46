"""Replacement chains read from (old, new) pairs alone."""

from __future__ import annotations

from shared.model import new_ulid
from shared.revisions import EMPTY, Replacements

NOW_MS = 1_800_000_000_000
A, B, B2, C, OTHER = (new_ulid(NOW_MS + n) for n in range(5))


def test_a_straight_chain_resolves_to_its_newest() -> None:
    chain = Replacements([(A, B), (B, C)])
    assert len(chain) == 2
    assert [chain.retired(v) for v in (A, B, C)] == [True, True, False]
    assert chain.current(A) == (C,)
    assert chain.current(B) == (C,)
    assert chain.current(C) == (C,)
    assert chain.replaced_by(A) == (B,)
    assert chain.replaced_by(B) == (C,)
    assert chain.replaced_by(C) == ()
    assert chain.versions(A) == chain.versions(B) == chain.versions(C) == (C, B, A)


def test_versions_are_newest_first_whatever_order_the_records_came_in() -> None:
    chain = Replacements([(B, C), (A, B)])
    assert chain.versions(B) == (C, B, A)
    assert chain.pairs() == [(B, C), (A, B)]


def test_a_fork_keeps_both_corrections_current() -> None:
    fork = Replacements([(A, B), (A, B2)])
    assert fork.retired(A)
    assert not fork.retired(B) and not fork.retired(B2)
    assert fork.current(A) == (B, B2)
    assert fork.current(B) == (B,)
    assert fork.current(B2) == (B2,)
    assert fork.replaced_by(A) == (B, B2)
    assert fork.versions(A) == fork.versions(B) == fork.versions(B2) == (B2, B, A)


def test_an_unrelated_id_is_its_own_only_version() -> None:
    chain = Replacements([(A, B), (B, C)])
    assert not chain.retired(OTHER)
    assert chain.current(OTHER) == (OTHER,)
    assert chain.replaced_by(OTHER) == ()
    assert chain.versions(OTHER) == (OTHER,)
    assert not EMPTY.retired(A) and EMPTY.current(A) == (A,) and len(EMPTY) == 0


def test_adding_the_same_pair_twice_is_one_record() -> None:
    chain = Replacements([(A, B)])
    chain.add(A, B)
    assert len(chain) == 1
    assert chain.pairs() == [(A, B)]


# remember cannot write a cycle (it replaces only a current memory), but an import did not
# check its replaced_by links before issue 29: Y → Z → Y, or X → X, may be stored.


def test_a_self_reference_retires_nothing() -> None:
    chain = Replacements([(A, A)])
    assert not chain.retired(A)
    assert chain.replaced_by(A) == ()
    assert chain.current(A) == (A,)
    assert chain.versions(A) == (A,)
    assert chain.successors(A) == (A,)  # the record itself is still there, for the expirer


def test_the_records_of_a_cycle_retire_nothing_and_every_member_is_current() -> None:
    chain = Replacements([(B, C), (C, B)])
    assert not chain.retired(B) and not chain.retired(C)
    assert chain.replaced_by(B) == chain.replaced_by(C) == ()
    assert chain.current(B) == (B,) and chain.current(C) == (C,)
    assert chain.versions(B) == chain.versions(C) == (C, B)


def test_a_longer_cycle_with_a_way_in_and_a_way_out_keeps_the_records_that_leave_it() -> None:
    # A → B → C → B2 → B, and C → OTHER: the cycle B, C, B2 is void; A → B and C → OTHER stand.
    chain = Replacements([(A, B), (B, C), (C, B2), (B2, B), (C, OTHER)])
    assert chain.retired(A) and chain.replaced_by(A) == (B,)
    assert not chain.retired(B) and not chain.retired(B2)
    assert chain.retired(C) and chain.replaced_by(C) == (OTHER,)
    assert chain.current(A) == (B,)
    assert chain.current(C) == (OTHER,)
    assert chain.replaced_by(B2) == ()
    assert chain.versions(A) == (OTHER, C, B2, B, A)


def test_a_record_that_closes_a_cycle_later_is_void_from_then_on() -> None:
    chain = Replacements([(A, B)])
    assert chain.retired(A)
    chain.add(B, A)
    assert not chain.retired(A) and not chain.retired(B)
    assert chain.current(A) == (A,)


def test_a_probable_update_keeps_both_current_and_its_undoing_ends_it() -> None:
    records = Replacements()
    records.record("01A", "01B", "supersedes")
    records.record("01A", "01C", "supersedes")
    assert not records.retired("01A")
    assert records.superseded_by("01A") == ("01C", "01B")
    assert records.supersedes("01B") == ("01A",)
    records.record("01A", "01B", "kept")
    assert records.superseded_by("01A") == ("01C",) and records.supersedes("01B") == ()
    assert records.links() == [("01A", "01C")]
    # What the expirer deletes with 01A: every link record naming it, undone or not.
    assert sorted(records.link_records("01A")) == [
        ("01A", "01B", "kept"),
        ("01A", "01B", "supersedes"),
        ("01A", "01C", "supersedes"),
    ]
