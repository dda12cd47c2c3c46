"""Shard names with chosen times, for tables that must not depend on randomness."""

from __future__ import annotations

from ulid import ULID

from shared.storage.shardlog import shard_name


def name_at(ms: int, process: str = "p1", *, suffix: int = 0) -> str:
    """``<ulid at ms>-<process>.json`` with a fixed random part (``suffix`` orders ties)."""
    ulid = ULID.from_bytes(ms.to_bytes(6, "big") + suffix.to_bytes(10, "big"))
    return shard_name(str(ulid), process)
