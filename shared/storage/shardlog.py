"""One shard log: the layout, the reads and writes, and the fold by compare-and-swap that the
access counters and the keyword lexicon both are.

::

    <root><tenant>/shard/<ulid>-<processId>.json   one write of one process, never modified
    <root><tenant>/merged.json                      every shard folded so far + the watermark

Nothing is modified in place: a process writes shard keys only it will ever write, and a fold
moves the watermark by compare-and-swap on merged.json, absorbing only shards older than the
lag (see ``absorbable_names`` for why the lag). A reader takes merged.json plus every shard above
its watermark. What a shard *means* — counts to add, documents to index — is the use's business
(``Folding``); where it lives, when it may be absorbed, and how a fold lands are the log's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Generic, Protocol, TypeVar

import msgspec

from shared.errors import ConflictError, StorageError
from shared.model.ids import new_ulid, ulid_time_ms
from shared.storage.interfaces import ObjectStore, StoredObject

logger = logging.getLogger(__name__)

# Shards younger than this are never absorbed (see absorbable_names).
COMPACTION_LAG_MS: Final = 60_000
# Bounds one fold's reads and its merged.json write; a larger backlog takes several folds, each
# absorbing an ascending prefix of it, which keeps the watermark rule intact.
MAX_SHARDS_PER_FOLD: Final = 5000
_SHARD_DIR: Final = "shard/"
_MERGED: Final = "merged.json"

M = TypeVar("M")


def shard_name(ulid: str, process_id: str) -> str:
    """``<ulid>-<processId>.json``: unique per process, ordered by the stamp's time."""
    return f"{ulid}-{process_id}.json"


def shard_time_ms(name: str) -> int | None:
    """The ULID time a shard's file name was stamped with, or None when it does not parse."""
    return ulid_time_ms(name[:26])


def fresh_names(names: Iterable[str], *, watermark: str) -> list[str]:
    """Shard names not yet folded: strictly above the watermark, ascending."""
    return sorted(name for name in names if name > watermark)


def absorbable_names(
    names: Iterable[str], *, watermark: str, now_ms: int, lag_ms: int
) -> list[str]:
    """Fresh shard names stamped at least ``lag_ms`` before ``now_ms``, ascending.

    A key is stamped when its writer builds it, not when the store accepts it, so a write still in
    flight (or one from a process whose clock runs behind) can land below names already visible.
    Drawing the line a full lag in the past means any write that lands within the lag of being
    stamped is still above the line when it becomes visible, so it is never skipped. A name whose
    time does not parse is never absorbed (a reader still counts it while it is fresh).
    """
    cutoff_ms = now_ms - lag_ms
    absorbable = []
    for name in fresh_names(names, watermark=watermark):
        stamped_ms = shard_time_ms(name)
        if stamped_ms is not None and stamped_ms <= cutoff_ms:
            absorbable.append(name)
    return absorbable


class ShardLayout(msgspec.Struct, frozen=True):
    """Where one log's objects live: ``stats/`` (counters) or ``lexicon/`` (keyword leg)."""

    root: str

    def shard_prefix(self, tenant: str) -> str:
        return f"{self.root}{tenant}/{_SHARD_DIR}"

    def shard_key(self, tenant: str, name: str) -> str:
        return f"{self.shard_prefix(tenant)}{name}"

    def merged_key(self, tenant: str) -> str:
        return f"{self.root}{tenant}/{_MERGED}"

    def parse_shard_key(self, key: str) -> tuple[str, str] | None:
        """(tenant, shard name) for one of this log's shard keys; None for anything else."""
        tenant, sep, name = key.removeprefix(self.root).partition(f"/{_SHARD_DIR}")
        if not key.startswith(self.root) or not sep or not tenant or not name or "/" in name:
            return None
        return tenant, name

    async def names(
        self, objects: ObjectStore, tenant: str, *, after: str = "", up_to: str | None = None
    ) -> list[str]:
        """Every shard name above ``after`` (and at most ``up_to``), ascending, across all pages.
        The listing starts after the watermark's key, so shards folded but not yet deleted cost
        nothing here; the backlog above it may be any size, so every page is followed."""
        prefix = self.shard_prefix(tenant)
        start_after = self.shard_key(tenant, after) if after else None
        found: list[str] = []
        async for keys in objects.pages(prefix, start_after=start_after):
            for key in keys:
                name = key[len(prefix) :]
                if up_to is not None and name > up_to:
                    return found
                if "/" not in name:
                    found.append(name)
        return found

    async def bodies(
        self, objects: ObjectStore, tenant: str, names: Sequence[str]
    ) -> dict[str, str]:
        """The bodies of these shards (``ObjectStore.get_many``); one gone meanwhile (folded and
        deleted by someone else, whose merged.json now holds it) is left out."""
        keys = {name: self.shard_key(tenant, name) for name in names}
        found = await objects.get_many(list(keys.values()))
        return {name: found[key].body for name, key in keys.items() if key in found}

    async def write(
        self, objects: ObjectStore, tenant: str, body: str, *, process_id: str, now_ms: int
    ) -> str:
        """Write one shard under a name only this process uses; its name."""
        name = shard_name(new_ulid(now_ms), process_id)
        await objects.put(self.shard_key(tenant, name), body)
        return name


class Folding(Protocol[M]):
    """What one use of a log means by merged.json and by a shard."""

    layout: ShardLayout
    # The log's name in log lines' ``log`` field ("stats", "lexicon").
    name: str

    def start(self, stored: StoredObject | None, tenant: str) -> M | None:
        """merged.json as a fold starts from; None when this tenant is not to be folded."""
        ...

    def watermark(self, merged: M) -> str: ...

    def absorb(self, merged: M, bodies: Mapping[str, str], names: Sequence[str]) -> M:
        """``merged`` with the shards ``names`` (ascending, all absorbable) added and the
        watermark at the last of them. A name without a body (gone, or unreadable and so
        left out by the use) moves the watermark past it all the same."""
        ...

    def encode(self, merged: M) -> str: ...


class FoldResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one fold of one tenant's log did."""

    shards_folded: int = 0
    shards_deleted: int = 0
    conflict: bool = False


class TenantBacklog(msgspec.Struct, frozen=True, kw_only=True):
    """One tenant's shards as their names show them."""

    tenant: str
    shards: int
    behind_lag: int


class ShardLog(Generic[M]):
    """One use of the layout: folding, garbage collection and the backlog scan."""

    def __init__(self, folding: Folding[M]) -> None:
        self.folding = folding
        self.layout = folding.layout

    async def fold(
        self,
        objects: ObjectStore,
        tenant: str,
        *,
        now_ms: int,
        lag_ms: int,
        min_shards: int = 1,
        max_shards: int = MAX_SHARDS_PER_FOLD,
    ) -> FoldResult:
        """Fold the tenant's shards older than the lag into merged.json, then delete them.

        Nothing is written unless at least ``min_shards`` are absorbable. A lost compare-and-swap
        returns ``conflict=True`` having done nothing else. Deleting the absorbed shards
        afterwards is best effort: the new watermark already excludes them.

        Raises:
            StorageError: reading or writing merged.json failed (nothing was changed).
        """
        stored = await objects.get(self.layout.merged_key(tenant))
        merged = self.folding.start(stored, tenant)
        if merged is None:
            return FoldResult()
        watermark = self.folding.watermark(merged)
        names = await self.layout.names(objects, tenant, after=watermark)
        absorbed = absorbable_names(names, watermark=watermark, now_ms=now_ms, lag_ms=lag_ms)[
            :max_shards
        ]
        if not absorbed or len(absorbed) < min_shards:
            return FoldResult()
        bodies = await self.layout.bodies(objects, tenant, absorbed)
        folded = self.folding.absorb(merged, bodies, absorbed)
        etag = stored.etag if stored is not None else None
        try:
            await objects.put(
                self.layout.merged_key(tenant),
                self.folding.encode(folded),
                if_match=etag,
                if_none_match=etag is None,
            )
        except ConflictError:
            logger.info("shard_fold_conflict", extra={"log": self.folding.name, "tenant": tenant})
            return FoldResult(conflict=True)
        deleted = await self._delete(objects, tenant, absorbed)
        return FoldResult(shards_folded=len(absorbed), shards_deleted=deleted)

    async def collect_garbage(self, objects: ObjectStore, tenant: str) -> int:
        """Delete the shards at or below the watermark (left by a fold that died after its
        compare-and-swap); how many. Safe beside any fold: the watermark only moves forward,
        and everything at or below it is already inside merged.json.

        Raises:
            StorageError: the listing or the delete failed.
        """
        stored = await objects.get(self.layout.merged_key(tenant))
        merged = self.folding.start(stored, tenant)
        watermark = self.folding.watermark(merged) if merged is not None else ""
        if not watermark:
            return 0
        names = await self.layout.names(objects, tenant, up_to=watermark)
        if names:
            await objects.delete([self.layout.shard_key(tenant, name) for name in names])
        return len(names)

    async def backlog(
        self, objects: ObjectStore, *, now_ms: int, lag_ms: int
    ) -> list[TenantBacklog]:
        """Every tenant with at least one shard, and how many are older than the lag, from one
        listing of the root in pages of 1,000 keys and no bodies: O(tenants + shards present).
        "Behind the lag" is judged by name only: shards folded but not yet deleted count too
        (a fold finds nothing to absorb there, and garbage collection removes them)."""
        shards: dict[str, int] = {}
        behind: dict[str, int] = {}
        cutoff_ms = now_ms - lag_ms
        async for keys in objects.pages(self.layout.root):
            for key in keys:
                parsed = self.layout.parse_shard_key(key)
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

    async def _delete(self, objects: ObjectStore, tenant: str, names: Sequence[str]) -> int:
        try:
            await objects.delete([self.layout.shard_key(tenant, name) for name in names])
        except StorageError:
            logger.warning(
                "shard_cleanup_failed",
                extra={"log": self.folding.name, "tenant": tenant, "shards": len(names)},
                exc_info=True,
            )
            return 0
        return len(names)
