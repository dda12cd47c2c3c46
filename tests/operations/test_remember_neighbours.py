"""Which of the memories that share a new fact's words remember reads for a probable update:
only those that speak of a name the fact speaks of inside a sentence, and say something of it
in a lower-case word too (``shared.operations.remember``; end to end on both backends in
``tests/api/test_supersedes_e2e.py``)."""

from __future__ import annotations

import msgspec
import pytest

from shared.model import Memory, iso_ms, new_ulid
from shared.operations.remember import _names_the_same
from shared.ranking import first_updated

NEW = "Hugo Bernard works for Nokia."


def test_the_same_subjects_earlier_fact_is_read() -> None:
    assert _names_the_same(NEW, "Hugo Bernard works for the European Space Agency.")
    assert _names_the_same(
        "Samuel Cohen speaks Norwegian as a first language.",
        "The native language of Samuel Cohen is Greek.",
    )


@pytest.mark.parametrize(
    ("new", "other"),
    [
        # Another relation of the same person: the name alone is shared.
        ("Hugo Bernard now lives in Rotterdam.", "Hugo Bernard is a citizen of Portugal."),
        ("The dish Dilys Owen loves most is now curry.", "Dilys Owen drives a Kia."),
        # Another person in the same pattern: "Every" opens both sentences, no name is shared.
        ("Every morning Owen Price has coffee.", "Every morning Fay Brennan has coffee."),
        # No name at all.
        ("The gateway listens on port 9443.", "The gateway listens on port 8443."),
    ],
)
def test_a_fact_that_shares_no_name_or_nothing_but_a_name_is_not_read(new: str, other: str) -> None:
    assert not _names_the_same(new, other)


def test_another_subject_that_shares_the_value_named_is_read_and_left_by_the_rules() -> None:
    """Both speak of "Nokia", so the rules read the pair, and they see another subject in the
    pattern's first place; the subject's own earlier fact behind it is the one linked."""
    other = "Ravi Patel works for Nokia."
    assert _names_the_same(NEW, other)
    at_ms = 1_800_000_000_000
    memory = Memory(id=new_ulid(at_ms), tenant="t", content=other, created_at=iso_ms(at_ms))
    assert first_updated(NEW, [memory], scope="project") is None
    earlier = msgspec.structs.replace(memory, content="Hugo Bernard works for Siemens.")
    assert first_updated(NEW, [memory, earlier], scope="project") is earlier
