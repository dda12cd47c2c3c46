"""Every kind of setting at its edges: what it admits, what it refuses, and the rule it states.

``shared.config`` names the variable in a refusal; what a value may be is decided here, so each
boundary is read here on the values on either side of it.
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.process.setting_kinds import (
    DEADLINE,
    FLAG,
    HOSTS,
    MAX_DEADLINE_S,
    MEGABYTES,
    PORT,
    POSITIVE_INT,
    SECONDS,
    SIMILARITY,
    Kind,
)

ADMITTED: list[tuple[Kind[Any], str, object]] = [
    (POSITIVE_INT, "1", 1),
    (POSITIVE_INT, "250", 250),
    (MEGABYTES, "0", 0),
    (MEGABYTES, "128", 128),
    (PORT, "1", 1),
    (PORT, "65535", 65535),
    (SECONDS, "0.001", 0.001),
    (SECONDS, "3600", 3600.0),
    (DEADLINE, "0.5", 0.5),
    (DEADLINE, str(MAX_DEADLINE_S), MAX_DEADLINE_S),
    (SIMILARITY, "0.01", 0.01),
    (SIMILARITY, "1", 1.0),
    (FLAG, "true", True),
    (FLAG, "TRUE", True),
    (FLAG, "1", True),
    (FLAG, "false", False),
    (FLAG, "False", False),
    (FLAG, "0", False),
]

REFUSED: list[tuple[Kind[Any], str]] = [
    (POSITIVE_INT, "0"),
    (POSITIVE_INT, "-3"),
    (POSITIVE_INT, "1.5"),
    (POSITIVE_INT, "ten"),
    (MEGABYTES, "-1"),
    (MEGABYTES, "64MB"),
    (PORT, "0"),
    (PORT, "65536"),
    (PORT, "80.0"),
    (SECONDS, "0"),
    (SECONDS, "-1"),
    (SECONDS, "nan"),
    (SECONDS, "inf"),
    (DEADLINE, "0"),
    (DEADLINE, str(MAX_DEADLINE_S + 0.5)),
    (DEADLINE, "5000"),  # milliseconds meant: a unit mistake, not a deadline
    (DEADLINE, "nan"),
    (SIMILARITY, "0"),
    (SIMILARITY, "1.01"),
    (SIMILARITY, "-0.2"),
    (SIMILARITY, "nan"),
    (FLAG, "yes"),
    (FLAG, "on"),
    (FLAG, ""),
]


@pytest.mark.parametrize(("kind", "raw", "expected"), ADMITTED)
def test_a_kind_admits_the_values_at_its_edges(kind: Kind[Any], raw: str, expected: object) -> None:
    assert kind.parse(raw) == expected


@pytest.mark.parametrize(("kind", "raw"), REFUSED)
def test_a_kind_refuses_the_values_past_its_edges(kind: Kind[Any], raw: str) -> None:
    with pytest.raises(ValueError):
        kind.parse(raw)


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        (POSITIVE_INT, "positive integer"),
        (MEGABYTES, "0 or more"),
        (PORT, "between 1 and 65535"),
        (SECONDS, "positive number of seconds"),
        (DEADLINE, f"at most {MAX_DEADLINE_S:g}"),
        (SIMILARITY, "greater than 0 and at most 1"),
        (FLAG, "true or false"),
    ],
)
def test_each_rule_states_the_limit_it_enforces(kind: Kind[Any], words: str) -> None:
    assert words in kind.rule


def test_hosts_are_addresses_normalised_once_each_and_names_are_refused() -> None:
    assert HOSTS.parse("localhost, [::1],127.0.0.1") == ("127.0.0.1", "::1")
    assert HOSTS.parse("0.0.0.0,::") == ("0.0.0.0", "::")
    for raw in ("example.com", "not a host!", "127.0.0.1,", "300.1.1.1"):
        with pytest.raises(ValueError):
            HOSTS.parse(raw)
    assert HOSTS.rule


def test_a_new_kind_refuses_what_its_rule_does_not_admit() -> None:
    even = Kind(int, "an even number", lambda v: v % 2 == 0)
    assert even.parse("4") == 4
    with pytest.raises(ValueError):
        even.parse("3")
