"""Folding one tenant's shards into merged.json, and removing shards a fold left behind.

Used by both the API's on-demand fold (off the request path) and the compactor's jobs. Any number
of them may run at once: the compare-and-swap on merged.json lets exactly one fold win per
version, and the watermark keeps an absorbed shard from being counted again even when it is never
deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from shared.counters._reader import list_shard_names, read_merged, read_shards
from shared.counters.codec import encode_merged
from shared.counters.fold import absorbable_names, fold, merge
from shared.errors import ConflictError, StorageError
from shared.model.counters import AccessCount, MergedCounters
from shared.model.keys import merged_key, shard_key
from shared.storage.interfaces import ObjectStore

logger = logging.getLogger(__name__)

# Bounds one fold's reads and its merged.json write; a larger backlog takes several folds, each
# absorbing an ascending prefix of it, which keeps the watermark rule intact.
MAX_SHARDS_PER_FOLD: Final = 5000


class FoldResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one fold of one tenant did."""

    shards_folded: int = 0
    shards_deleted: int = 0
    conflict: bool = False


async def fold_tenant(
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
    returns ``conflict=True`` having done nothing else. Deleting the absorbed shards afterwards is
    best effort: the new watermark already excludes them.

    Raises:
        StorageError: reading or writing merged.json failed (nothing was changed).
    """
    current = await read_merged(objects, tenant)
    names = await list_shard_names(objects, tenant, after=current.merged.watermark)
    candidates = absorbable_names(
        names, watermark=current.merged.watermark, now_ms=now_ms, lag_ms=lag_ms
    )[:max_shards]
    if not candidates or len(candidates) < min_shards:
        return FoldResult()
    shards = await read_shards(objects, tenant, candidates)
    plan = fold(current.merged, shards, now_ms=now_ms, lag_ms=lag_ms)
    if not plan.absorbed:
        return FoldResult()
    try:
        await objects.put(
            merged_key(tenant),
            encode_merged(plan.merged),
            if_match=current.etag,
            if_none_match=current.etag is None,
        )
    except ConflictError:
        logger.info("stats_fold_conflict", extra={"tenant": tenant})
        return FoldResult(conflict=True)
    deleted = await _delete_shards(objects, tenant, plan.absorbed)
    return FoldResult(shards_folded=len(plan.absorbed), shards_deleted=deleted)


async def add_to_merged(
    objects: ObjectStore, tenant: str, counts: Mapping[str, AccessCount], *, attempts: int = 8
) -> None:
    """Fold counts that come from outside this store (an import) into merged.json, by the same
    compare-and-swap a fold uses; the watermark is kept, as no shard was absorbed.

    Raises:
        ConflictError: every attempt lost the compare-and-swap to another writer.
        StorageError: reading or writing merged.json failed (nothing was changed).
    """
    for _ in range(attempts):
        current = await read_merged(objects, tenant)
        merged = MergedCounters(
            counts=merge(current.merged.counts, counts), watermark=current.merged.watermark
        )
        try:
            await objects.put(
                merged_key(tenant),
                encode_merged(merged),
                if_match=current.etag,
                if_none_match=current.etag is None,
            )
            return
        except ConflictError:
            continue  # a fold won meanwhile: read it again and add to what it wrote
    raise ConflictError(f"merged counters of {tenant!r} kept changing; the counts were not added")


async def collect_garbage(objects: ObjectStore, tenant: str) -> int:
    """Delete the shards at or below the watermark (left behind by a fold that died after its
    compare-and-swap); returns how many were deleted.

    Safe beside any fold: the watermark only moves forward, and everything at or below it is
    already inside merged.json.

    Raises:
        StorageError: the listing or the delete failed.
    """
    watermark = (await read_merged(objects, tenant)).merged.watermark
    if not watermark:
        return 0
    names = await list_shard_names(objects, tenant, up_to=watermark)
    if names:
        await objects.delete([shard_key(tenant, name) for name in names])
    return len(names)


async def _delete_shards(objects: ObjectStore, tenant: str, names: Sequence[str]) -> int:
    try:
        await objects.delete([shard_key(tenant, name) for name in names])
    except StorageError:
        logger.warning(
            "stats_shard_cleanup_failed",
            extra={"tenant": tenant, "shards": len(names)},
            exc_info=True,
        )
        return 0
    return len(names)
