"""Millisecond times rendered for keys and counters, and parsed back."""

from __future__ import annotations

import pytest

from shared.model import Memory
from shared.model.ids import canonical_iso, iso_ms, parse_iso_ms


def test_this_time_parses_to_its_own_millisecond() -> None:
    # Through a float of seconds it came back 1 ms early, as about one time in 150 did.
    assert parse_iso_ms("2038-10-15T04:21:25.923Z") == 2_170_729_285_923


@pytest.mark.parametrize(
    "ms", [0, 270_837_800_965, 542_388_516_762, 1_092_522_693_327, 1_796_018_400_123]
)
def test_rendering_and_parsing_round_trip_exactly(ms: int) -> None:
    assert parse_iso_ms(iso_ms(ms)) == ms


def test_finer_than_a_millisecond_rounds_down_to_the_millisecond_it_falls_in() -> None:
    assert parse_iso_ms("2027-01-15T08:00:00.123999Z") == 1_800_000_000_123
    assert parse_iso_ms("1969-12-31T23:59:59.9995Z") == -1


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("2026-12-02T19:15:48.123Z", "2026-12-02T19:15:48.123Z"),
        ("2026-12-03T04:15:48+09:00", "2026-12-02T19:15:48.000Z"),
        ("2026-12-02T14:15:48-05:00", "2026-12-02T19:15:48.000Z"),
        ("20261202T191548Z", "2026-12-02T19:15:48.000Z"),
        ("2026-W49-3", "2026-12-02T00:00:00.000Z"),
        ("2026-12-02T19:15:48", "2026-12-02T19:15:48.000Z"),
        ("0999-01-01T00:00:00Z", "0999-01-01T00:00:00.000Z"),
        ("yesterday", None),
        ("2026-13-45T00:00:00.000Z", None),
    ],
)
def test_every_iso_form_has_one_canonical_utc_form(written: str, canonical: str | None) -> None:
    assert canonical_iso(written) == canonical


def test_a_memory_holds_its_expiry_in_the_canonical_form_whatever_it_was_given() -> None:
    memory = Memory(
        id="01ARZ3NDEKTSV4RRFFQ69G5FAV",
        tenant="acme",
        content="x",
        created_at=iso_ms(0),
        expires_at="2026-12-03T04:15:48+09:00",
    )
    assert memory.expires_at == "2026-12-02T19:15:48.000Z"
    assert memory.expired(iso_ms(parse_iso_ms("2026-12-02T19:15:48Z") or 0))
    assert not memory.expired("2026-12-02T19:15:47.999Z")
