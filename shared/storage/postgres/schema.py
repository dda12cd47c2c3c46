"""The design's schema, created by whichever process boots first.

Every statement is idempotent and they all run in one transaction under a transaction-scoped
advisory lock, so several processes booting together on an empty database queue up behind the
first instead of racing on the same CREATE (two concurrent ``CREATE EXTENSION IF NOT EXISTS``
calls can both miss and one then fails on a unique violation).

Three choices are deliberate: the ``vector`` column has no width (it is the embedding model's,
and a model swap needs no migration); there is no vector index (recall is an exact scan over one
tenant, and an approximate index can miss the nearest neighbour dedup asks for); ``key`` is
collated "C" (the recency index sorts newest-first only in byte order, which is what S3 lists in).
"""

from __future__ import annotations

import logging
from typing import Final

from shared.errors import SchemaError, StorageError
from shared.storage.postgres._datastore import Session

logger = logging.getLogger(__name__)

ADVISORY_LOCK_KEY: Final = 7_304_592_118_001
CREATE_EXTENSION_SQL: Final = "CREATE EXTENSION IF NOT EXISTS vector"

_LOCK_SQL: Final = "SELECT pg_advisory_xact_lock($1)"
_HAS_VECTOR_SQL: Final = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')"
_HAS_TABLES_SQL: Final = """
SELECT to_regclass('memories') IS NOT NULL
   AND to_regclass('objects_version') IS NOT NULL
   AND to_regclass('objects') IS NOT NULL
"""

TABLE_STATEMENTS: Final = (
    """
    CREATE TABLE IF NOT EXISTS memories (
      tenant_id text   NOT NULL,
      id        text   NOT NULL,
      embedding vector NOT NULL,
      metadata  jsonb  NOT NULL,
      PRIMARY KEY (tenant_id, id)
    )
    """,
    # One sequence for every object: a deleted and re-created key can never reuse an old etag.
    "CREATE SEQUENCE IF NOT EXISTS objects_version",
    """
    CREATE TABLE IF NOT EXISTS objects (
      key        text COLLATE "C" PRIMARY KEY,
      body       text        NOT NULL,
      version    bigint      NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )
    """,
)


def missing_extension_message(cause: str) -> str:
    """What the boot says when the pgvector extension is missing and cannot be created."""
    return (
        "the pgvector extension is not installed in this database and this role cannot create "
        f"it: run `{CREATE_EXTENSION_SQL.replace(' IF NOT EXISTS', '')}` once as a superuser, or "
        f"use an image that ships it (pgvector/pgvector:pg17) — {cause}"
    )


async def ensure_schema(session: Session) -> bool:
    """Create whatever of the schema is missing; True when this call created the tables.

    Raises:
        SchemaError: the vector extension is missing and this role cannot create it.
        StorageError: the lock or a statement failed.
    """
    async with session.transaction():
        await session.execute(_LOCK_SQL, ADVISORY_LOCK_KEY)
        if not await session.fetchval(_HAS_VECTOR_SQL):
            try:
                await session.execute(CREATE_EXTENSION_SQL)
            except StorageError as error:
                raise SchemaError(
                    missing_extension_message(str(error.__cause__ or error))
                ) from error
        if await session.fetchval(_HAS_TABLES_SQL):
            return False
        for statement in TABLE_STATEMENTS:
            await session.execute(statement)
    return True
