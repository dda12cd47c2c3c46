"""The PostgreSQL backend: both store interfaces over one database, asyncpg + pgvector; the
vector store inside its in-process snapshots (``scan``), and the change log's pruning as
housekeeping.

Used for ``DATABASE_URL`` and, through the very same code, for the embedded database that
``--local`` starts in a data dir.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from shared.process.lazy_exports import exports_on_first_use

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

__getattr__ = exports_on_first_use(__name__, _EXPORTS)


__all__ = ["PostgresObjectStore", "PostgresVectorStore", "describe", "open_postgres_stores"]
