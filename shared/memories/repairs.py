"""The two repairs of a half-written memory the API makes on its own paths, without waiting for
the compactor's reconcile job (``shared.memories.reconcile``, which repairs every case).

A process killed between a memory's writes (``lifecycle.WRITE_ORDER``) or a forget's deletes
leaves an index key without a vector, or (written by 0.9 and 0.10, vector first) a vector
without a key. Only what is older than the lag is judged: a younger mismatch may be a write
still in flight in another process.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from shared.errors import ConflictError, StorageError
from shared.model import IndexEntry, Memory, index_key
from shared.model.ids import ulid_time_ms
from shared.storage.interfaces import ObjectStore

logger = logging.getLogger(__name__)


def settled(memory_id: str, *, now_ms: int, lag_ms: int) -> bool:
    """Whether a memory is older than the lag, judged by its id's time. An id that is not a
    ULID is never judged settled: what cannot be dated is never repaired."""
    created_ms = ulid_time_ms(memory_id)
    return created_ms is not None and created_ms <= now_ms - lag_ms


async def ensure_listed(objects: ObjectStore, memory: Memory) -> None:
    """Write the index key of a memory answered as already known when it has none: one
    written by 0.9 or 0.10 (vector first) and cut off by a crash before its key. The key is
    derived from the memory alone, and a create-only put cannot clobber a live one."""
    key = index_key(memory)
    try:
        if await objects.etag(key) is None:
            await objects.put(key, "", if_none_match=True)
            logger.info("index_key_restored", extra={"tenant": memory.tenant})
    except ConflictError:
        pass  # written meanwhile: listed either way
    except StorageError:
        # The answer stands; the compactor's reconcile job restores the key later.
        logger.warning("index_key_restore_failed", extra={"tenant": memory.tenant})


async def drop_orphan_keys(
    objects: ObjectStore,
    tenant: str,
    bodiless: Sequence[IndexEntry],
    *,
    now_ms: int,
    lag_ms: int,
) -> None:
    """Delete the index keys list found without a vector, once older than the lag: left by
    a process killed mid-remember or mid-forget (a younger one may be a remember still in
    flight). Without this they would be counted by memory_stats until the compactor's
    reconcile job ran."""
    orphaned = [e.key for e in bodiless if settled(e.memory_id, now_ms=now_ms, lag_ms=lag_ms)]
    if not orphaned:
        return
    try:
        await objects.delete(orphaned)
    except StorageError:
        logger.warning("orphan_key_cleanup_failed", extra={"tenant": tenant})
        return
    logger.info("orphan_keys_deleted", extra={"tenant": tenant, "keys": len(orphaned)})
