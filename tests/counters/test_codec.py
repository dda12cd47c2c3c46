"""The wire formats decode tolerantly: bad entries go, their neighbours stay."""

from __future__ import annotations

import msgspec
import pytest

from shared.counters.codec import (
    decode_counts,
    decode_merged,
    decode_shard,
    encode_merged,
    encode_shard,
)
from shared.model.counters import AccessCount, MergedCounters

GOOD = {"access": 3, "lastAt": "2027-01-15T08:00:00.000Z"}


def test_shard_round_trip_uses_the_design_layout() -> None:
    deltas = {"01J": AccessCount(access=3, last_at="2027-01-15T08:00:00.000Z")}
    body = encode_shard(deltas)
    assert msgspec.json.decode(body) == {"01J": GOOD}
    assert decode_shard(body) == deltas


def test_merged_round_trip_uses_the_design_layout() -> None:
    merged = MergedCounters(
        counts={"01J": AccessCount(access=3, last_at=GOOD["lastAt"])},  # type: ignore[arg-type]
        watermark="01ABC-p.json",
    )
    body = encode_merged(merged)
    assert msgspec.json.decode(body) == {"counts": {"01J": GOOD}, "watermark": "01ABC-p.json"}
    assert decode_merged(body) == merged


@pytest.mark.parametrize(
    "bad",
    [
        {"access": "3", "lastAt": GOOD["lastAt"]},
        {"access": 3},
        {"access": 3, "lastAt": "yesterday"},
        {"access": -1, "lastAt": GOOD["lastAt"]},
        {"access": True, "lastAt": GOOD["lastAt"]},
        {"access": 1.5, "lastAt": GOOD["lastAt"]},
        [3, GOOD["lastAt"]],
        None,
    ],
)
def test_a_bad_entry_is_dropped_and_its_neighbours_kept(bad: object) -> None:
    body = msgspec.json.encode({"good": GOOD, "bad": bad, "also": GOOD})
    assert set(decode_shard(body) or {}) == {"good", "also"}
    merged = decode_merged(msgspec.json.encode({"counts": {"good": GOOD, "bad": bad}}))
    assert merged is not None
    assert set(merged.counts) == {"good"}


def test_last_at_is_normalised_so_strings_compare_as_times() -> None:
    body = msgspec.json.encode({"m": {"access": 1, "lastAt": "2027-01-15T08:00:00+00:00"}})
    assert decode_shard(body) == {"m": AccessCount(access=1, last_at="2027-01-15T08:00:00.000Z")}


@pytest.mark.parametrize("body", ["", "{", "[]", '"text"', "42", "null"])
def test_a_body_that_is_not_an_object_is_unreadable(body: str) -> None:
    assert decode_shard(body) is None
    assert decode_merged(body) is None


def test_merged_with_a_non_string_watermark_is_unreadable() -> None:
    assert decode_merged('{"counts": {}, "watermark": 7}') is None


def test_merged_missing_fields_read_as_empty() -> None:
    assert decode_merged("{}") == MergedCounters()


@pytest.mark.parametrize(
    "entry",
    [
        GOOD,
        {"access": 0, "lastAt": "1970-01-01T00:00:00.000Z"},
        {"access": 2, "lastAt": "2027-01-15T08:00:00+00:00"},  # not yet in the rendered form
        {"access": 2, "lastAt": "2027-01-15T08:00:00.5Z"},
        {"access": 2, "lastAt": "2027-02-30T08:00:00.000Z"},  # no such day
        {"access": 2, "lastAt": "2027-13-01T08:00:00.000Z"},
        {"access": 2, "lastAt": "1969-12-31T23:59:59.999Z"},
        {"access": 2, "lastAt": "3001-01-01T00:00:00.000Z"},
        {"access": -1, "lastAt": GOOD["lastAt"]},
        {"access": 2, "lastAt": GOOD["lastAt"], "extra": True},
    ],
)
def test_every_body_decodes_as_the_entry_by_entry_reading_does(entry: object) -> None:
    # Bodies in the written form take one typed pass; whatever path a body takes, the result is
    # what checking each entry on its own gives.
    shard = {"m1": GOOD, "m2": entry, "": GOOD}
    body = msgspec.json.encode(shard)
    assert decode_shard(body) == decode_counts(msgspec.json.decode(body))
    merged_body = msgspec.json.encode({"counts": shard, "watermark": "01ABC-p.json"})
    assert decode_merged(merged_body) == MergedCounters(
        counts=decode_counts(shard), watermark="01ABC-p.json"
    )
    alone = msgspec.json.encode({"m1": GOOD, "m2": entry})
    assert decode_shard(alone) == decode_counts(msgspec.json.decode(alone))


def test_a_written_merged_body_decodes_to_what_was_encoded() -> None:
    counts = {
        f"m{number}": AccessCount(
            access=number, last_at=f"2027-01-{1 + number % 28:02d}T08:00:00.{number % 1000:03d}Z"
        )
        for number in range(2000)
    }
    merged = MergedCounters(counts=counts, watermark="01ABC-p.json")
    assert decode_merged(encode_merged(merged)) == merged
    assert decode_shard(encode_shard(counts)) == counts
