"""The PostgreSQL backend: both store interfaces over one database, asyncpg + pgvector; the
vector store inside its in-process snapshots (``scan``), and the change log's pruning as
housekeeping.

Used for ``DATABASE_URL`` and, through the very same code, for the embedded database that
``--local`` starts in a data dir.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from shared.storage.postgres.object_store import PostgresObjectStore
    from shared.storage.postgres.stores import describe, open_postgres_stores
    from shared.storage.postgres.vector_store import PostgresVectorStore

# Read on first use: the keeper of an embedded database (``python -m
# shared.storage.postgres.keeper``) imports this package on its way to its own module, and
# starting it must not wait for asyncpg, numpy and the scan cache it never uses.
_EXPORTS: Final = {
    "PostgresObjectStore": "shared.storage.postgres.object_store",
    "PostgresVectorStore": "shared.storage.postgres.vector_store",
    "describe": "shared.storage.postgres.stores",
    "open_postgres_stores": "shared.storage.postgres.stores",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["PostgresObjectStore", "PostgresVectorStore", "describe", "open_postgres_stores"]
