"""The import's link check on its own (pure): what it refuses, by which lines, and that links
already stored are not judged again."""

from __future__ import annotations

import pytest

from shared.model import new_ulid
from shared.revisions import Replacements
from shared.transfer import ImportLinkError
from shared.transfer.links import Line, LinkCheck

NOW_MS = 1_800_000_000_000
A, B, C, D = (new_ulid(NOW_MS + n) for n in range(4))


def check(
    lines: list[Line],
    stored: Replacements | None = None,
    seen: dict[tuple[str, str], str | None] | None = None,
) -> None:
    links = LinkCheck()
    for line in lines:
        links.add(line)
    links.check({"acme": stored or Replacements()}, seen or {})


def line(number: int, memory_id: str, *replaced_by: str, note_of: str | None = None) -> Line:
    return Line(number, "acme", memory_id, replaced_by, note_of)


def test_a_chain_and_a_fork_pass() -> None:
    check([line(1, A, B, C), line(2, B, D), line(3, C), line(4, D)])


def test_a_cycle_of_three_names_its_path_and_every_line_of_it() -> None:
    with pytest.raises(ImportLinkError) as refused:
        check([line(1, A, B), line(2, B, C), line(5, C, A), line(6, D)])
    assert refused.value.numbers == (1, 2, 5)
    assert str(refused.value).startswith("lines 1, 2 and 5: `replaced_by` links form a cycle: ")
    assert f"{A} → {B} → {C} → {A}" in str(refused.value)


def test_links_already_stored_are_not_judged_again() -> None:
    # What an export of a store wrote comes back unchanged, even around a stored cycle.
    stored = Replacements([(A, B), (B, A), (C, D)])
    check([line(1, A, B), line(2, C, D)], stored)


def test_a_stored_record_that_a_new_note_completes_is_judged() -> None:
    # The store has A → B with B's body missing; the file brings B as a note of a thread.
    stored = Replacements([(A, B)])
    with pytest.raises(ImportLinkError) as refused:
        check([line(4, B, note_of="thread-1")], stored, {("acme", A): None})
    assert refused.value.numbers == (4,) and "seen more widely" in str(refused.value)
    # The same note with the stored memory a note of its thread is fine.
    check([line(4, B, note_of="thread-1")], stored, {("acme", A): "thread-1"})


def test_the_stored_body_wins_over_the_line_for_an_id_already_stored() -> None:
    # The line says B is a project memory, but B is stored as a note: the store is what is read.
    with pytest.raises(ImportLinkError):
        check([line(1, A, B), line(2, B)], seen={("acme", B): "thread-1"})
