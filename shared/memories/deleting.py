"""Deleting memories in ``DELETE_ORDER``, behind a record of the forget (``forgetting``).

The vectors go first, so a failure part-way never leaves a memory that recall finds; then the
lexicon entries and the keys, whose failures are only logged (a keyword hit without a body is
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

# Removes memories from the tenant's keyword lexicon (``Lexicon.removed`` in the API).
RemoveFromLexicon = Callable[[str, Sequence[str]], Awaitable[None]]


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
        await self._vectors.delete(tenant, ids)
        try:
            await self._remove_from_lexicon(tenant, ids)
        except StorageError:
            logger.warning("forget_lexicon_cleanup_failed", extra={"tenant": tenant})
        try:
            await self._objects.delete(keys)
        except StorageError:
            # The memories are gone already, so the caller is not told the forget failed.
            logger.warning("forget_index_cleanup_failed", extra={"tenant": tenant})


__all__ = ["MemoryDeleter", "RemoveFromLexicon"]
