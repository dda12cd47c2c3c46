"""Access counters as records: per-memory deltas, and the folded snapshot with its watermark."""

from __future__ import annotations

import msgspec


class AccessCount(msgspec.Struct, frozen=True, kw_only=True):
    """How often a memory was returned, and when last (ISO-8601 UTC with milliseconds).

    Serialised as ``{"access": n, "lastAt": "..."}``: the shard body layout of the design.
    """

    access: int
    last_at: str = msgspec.field(name="lastAt")


ZERO_COUNT = AccessCount(access=0, last_at="")


class MergedCounters(msgspec.Struct, frozen=True, kw_only=True):
    """``stats/<tenant>/merged.json``: every shard at or below ``watermark`` folded into counts.

    The watermark is the full file name of the newest absorbed shard (``<ulid>-<process>.json``),
    so two processes flushing in the same millisecond never compare equal.
    """

    counts: dict[str, AccessCount] = msgspec.field(default_factory=dict)
    watermark: str = ""
