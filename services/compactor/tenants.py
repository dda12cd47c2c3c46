"""Which tenants have shards, found from key names alone.

One listing of ``stats/`` walks every counter key of every tenant — each tenant's merged.json
plus every shard not yet deleted — in pages of 1,000 keys, and reads no bodies. Its cost is
therefore O(tenants + shards present) keys, i.e. (tenants + shards) / 1000 list requests per scan.
With the compactor keeping up, the shards present per tenant stay near what the processes flush
in one lag plus one fold interval (processes × (60 s + interval) / STATS_FLUSH_MS), so a scan
grows with the number of active tenants, not with history.
"""

from __future__ import annotations

from typing import Final

import msgspec

from shared.model.keys import STATS_ROOT, shard_time_ms
from shared.storage import ObjectStore

LIST_PAGE_KEYS: Final = 1000
_SHARD_DIR: Final = "shard"


class TenantBacklog(msgspec.Struct, frozen=True, kw_only=True):
    """One tenant's shards as their names show them."""

    tenant: str
    shards: int
    behind_lag: int


def _parse_shard(key: str, root: str) -> tuple[str, str] | None:
    """(tenant, shard name) for a shard key; None for merged.json and anything else."""
    parts = key[len(root) :].split("/")
    if len(parts) == 3 and parts[1] == _SHARD_DIR and parts[0] and parts[2]:
        return parts[0], parts[2]
    return None


async def scan_backlog(
    objects: ObjectStore, *, now_ms: int, lag_ms: int, root: str = STATS_ROOT
) -> list[TenantBacklog]:
    """Every tenant with at least one shard under ``root`` (the counters' ``stats/`` or the
    keyword leg's ``lexicon/``, which share the layout), and how many are older than the lag.

    "Behind the lag" is judged by name only: shards already folded but not yet deleted count too
    (the fold finds nothing to absorb there and the GC job removes them).
    """
    shards: dict[str, int] = {}
    behind: dict[str, int] = {}
    cutoff_ms = now_ms - lag_ms
    async for keys in objects.pages(root, page_size=LIST_PAGE_KEYS):
        for key in keys:
            parsed = _parse_shard(key, root)
            if parsed is None:
                continue
            tenant, name = parsed
            shards[tenant] = shards.get(tenant, 0) + 1
            stamped_ms = shard_time_ms(name)
            if stamped_ms is not None and stamped_ms <= cutoff_ms:
                behind[tenant] = behind.get(tenant, 0) + 1
    return [
        TenantBacklog(tenant=tenant, shards=count, behind_lag=behind.get(tenant, 0))
        for tenant, count in sorted(shards.items())
    ]
