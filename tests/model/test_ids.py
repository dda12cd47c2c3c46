"""Millisecond times rendered for keys and counters, and parsed back."""

from __future__ import annotations

import pytest

from shared.model.ids import iso_ms, parse_iso_ms


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
