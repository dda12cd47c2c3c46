"""Shard and merged.json bodies on the wire, decoded tolerantly.

A body written by an older or broken process must not take its valid neighbours down with it:
a malformed entry is dropped and the rest of the object survives; only a body that is not a JSON
object at all counts as unreadable.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from shared.model.counters import AccessCount, MergedCounters
from shared.model.ids import iso_ms, parse_iso_ms

_ENCODER = msgspec.json.Encoder()


def encode_shard(deltas: Mapping[str, AccessCount]) -> str:
    """``{memoryId: {"access": n, "lastAt": iso}}``."""
    return _ENCODER.encode(dict(deltas)).decode()


def encode_merged(merged: MergedCounters) -> str:
    """``{"counts": {...}, "watermark": "<newest absorbed shard name>"}``."""
    return _ENCODER.encode(merged).decode()


def _decode_object(body: str | bytes) -> dict[str, object] | None:
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    return value if isinstance(value, dict) else None


def _entry(value: object) -> AccessCount | None:
    try:
        count = msgspec.convert(value, AccessCount)
    except msgspec.ValidationError:
        return None
    at_ms = parse_iso_ms(count.last_at)
    if count.access < 0 or at_ms is None:
        return None
    # Re-render the time so every stored lastAt has the one form whose string order is time order.
    return AccessCount(access=count.access, last_at=iso_ms(at_ms))


def decode_counts(value: object) -> dict[str, AccessCount]:
    """The valid entries of a ``{memoryId: {access, lastAt}}`` object; invalid ones are dropped."""
    if not isinstance(value, dict):
        return {}
    counts: dict[str, AccessCount] = {}
    for memory_id, raw in value.items():
        entry = _entry(raw)
        if memory_id and entry is not None:
            counts[memory_id] = entry
    return counts


def decode_shard(body: str | bytes) -> dict[str, AccessCount] | None:
    """A shard's valid deltas, or None when the body is not a JSON object (a corrupt shard)."""
    value = _decode_object(body)
    return None if value is None else decode_counts(value)


def decode_merged(body: str | bytes) -> MergedCounters | None:
    """merged.json's counts (valid entries only) and watermark, or None when unreadable.

    A watermark that is not a string makes the whole object unreadable: without it there is no
    telling which shards the counts already include.
    """
    value = _decode_object(body)
    if value is None:
        return None
    watermark = value.get("watermark", "")
    if not isinstance(watermark, str):
        return None
    return MergedCounters(counts=decode_counts(value.get("counts")), watermark=watermark)
