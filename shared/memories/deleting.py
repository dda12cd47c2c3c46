"""Deleting memories in ``DELETE_ORDER``: a forget behind a record of itself (``forgetting``),
and expiry (``shared.memories.expiry``) through the same steps.

The vectors go first, so a failure part-way never leaves a memory that recall finds; then the
lexicon entries and the keys. A forget only logs their failures (a keyword hit without a body is
dropped, a key without a vector is skipped by list). The record written before any of it lets
the next reader finish a forget a crash cut short instead of leaving keys no filter can reach.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from shared.errors import StorageError
from shared.memories.forgetting import ForgetJournal
from shared.storage.interfaces import ObjectStore, VectorStore

logger = logging.getLogger(__name__)

# Removes memories from the tenant's keyword lexicon (``Lexicon.removed`` in the API, a shard
# of this process's in the compactor: ``RepairContext.remove_from_lexicon``).
RemoveFromLexicon = Callable[[str, Sequence[str]], Awaitable[None]]


async def delete_memories(
    objects: ObjectStore,
    vectors: VectorStore,
    remove_from_lexicon: RemoveFromLexicon,
    tenant: str,
    ids: Sequence[str],
    keys: Sequence[str],
    *,
    cleanup_failures_raise: bool,
) -> None:
    """``DELETE_ORDER`` between the record and its removal: the vectors, then the lexicon
    entries, then the keys; a step with nothing to delete is skipped.

    Raises:
        StorageError: the vectors could not be deleted; or, with ``cleanup_failures_raise``,
            the lexicon entries or the keys (expiry: its ``expiry/`` key stays due, and the
            next run repeats every step).
    """
    if ids:
        await vectors.delete(tenant, ids)
        try:
            await remove_from_lexicon(tenant, ids)
        except StorageError:
            if cleanup_failures_raise:
                raise
            logger.warning("forget_lexicon_cleanup_failed", extra={"tenant": tenant})
    if keys:
        try:
            await objects.delete(keys)
        except StorageError:
            if cleanup_failures_raise:
                raise
            # The memories are gone already, so the caller is not told the forget failed.
            logger.warning("forget_index_cleanup_failed", extra={"tenant": tenant})


class MemoryDeleter:
    """Forgets for one pair of stores, and the ids of forgets not yet finished."""

    def __init__(
        self,
        objects: ObjectStore,
        vectors: VectorStore,
        remove_from_lexicon: RemoveFromLexicon,
        *,
        clock_ms: Callable[[], int],
        lag_ms: int,
    ) -> None:
        self._objects = objects
        self._vectors = vectors
        self._remove_from_lexicon = remove_from_lexicon
        self._journal = ForgetJournal(objects, clock_ms=clock_ms, lag_ms=lag_ms)

    async def delete(self, tenant: str, ids: Sequence[str], keys: Sequence[str | None]) -> None:
        """Delete these memories and their keys. A failure leaves the record: the caller asked
        for them to go, and the next reader past the lag finishes it.

        Raises:
            StorageError: the record or the vectors could not be written or deleted.
        """
        present = [key for key in keys if key is not None]
        record = await self._journal.begin(tenant, ids, present)
        await self._delete_now(tenant, ids, present)
        await self._journal.end(tenant, record)

    async def forgetting(self, tenant: str) -> frozenset[str]:
        """The ids of forgets not yet finished, to be treated as gone; stale ones (older than
        the lag: their writer is dead) are finished first."""
        return await self._journal.pending(tenant, self._delete_now)

    async def _delete_now(self, tenant: str, ids: Sequence[str], keys: Sequence[str]) -> None:
        await delete_memories(
            self._objects,
            self._vectors,
            self._remove_from_lexicon,
            tenant,
            ids,
            keys,
            cleanup_failures_raise=False,
        )
