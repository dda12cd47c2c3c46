"""A memory's writes and their order: the crash-safety rule, in one place.

A memory is several writes, and nothing makes them atomic: its expiry key (when it expires),
its index key, its vector, its lexicon entry. They are written in ``WRITE_ORDER`` so that a
process killed between two of them leaves keys without a body (which list skips, and repairs
once older than the lag) and never a body that recall finds but list never shows; and an
expiring memory is never stored without the key that has it deleted. A forget undoes them in
``DELETE_ORDER`` behind a record of itself (``deleting``, ``forgetting``).
``docs/architecture.md`` and the README describe these orders; a test holds the README to them.

The lexicon entry is written by the caller after ``write_memory``: the API applies it to its own
index at once (``Lexicon.added``), an import writes one shard for a whole batch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Final

from shared.errors import BudgetError, InvalidInputError, StorageError
from shared.model import IndexEntry, Memory, index_key
from shared.model.keys import expiry_key, expiry_key_of
from shared.storage.interfaces import ObjectStore, VectorStore

WRITE_ORDER: Final = ("expiry key", "index key", "vector", "lexicon shard")
DELETE_ORDER: Final = ("forget record", "vector", "lexicon entry", "keys", "forget record removed")


def memory_keys(memory: Memory) -> list[str]:
    """The memory's object-store keys in the order they are written: its expiry key (only
    when it expires), then its index key."""
    return [key for key in (expiry_key_of(memory), index_key(memory)) if key is not None]


def entry_keys(tenant: str, entries: Sequence[IndexEntry]) -> list[str]:
    """The keys of memories known by their index entries alone (a bulk forget reads no
    bodies): each index key, and the expiry key of each that expires."""
    return [e.key for e in entries] + [
        expiry_key(tenant, e.memory_id, e.expires_ms) for e in entries if e.expires_ms is not None
    ]


async def write_memory(
    objects: ObjectStore, vectors: VectorStore, memory: Memory, embedding: Sequence[float]
) -> None:
    """The memory's keys, then its vector (``WRITE_ORDER`` up to the lexicon shard).

    Raises:
        BudgetError, InvalidInputError: the vector was refused before anything was sent, so
            its keys were surely orphans and are taken back. Any other failure may have landed
            the vector after all (a timeout), so its keys stay for the repair to judge.
        StorageError: a write failed.
    """
    keys = memory_keys(memory)
    for key in keys:
        await objects.put(key, "")
    try:
        await vectors.put(memory, embedding)
    except (BudgetError, InvalidInputError):
        with contextlib.suppress(StorageError):
            await objects.delete(keys)
        raise
