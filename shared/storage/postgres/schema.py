"""The design's schema, created by whichever process boots first.

Every statement is idempotent and they all run in one transaction under a transaction-scoped
advisory lock, so several processes booting together on an empty database queue up behind the
first instead of racing on the same CREATE (two concurrent ``CREATE EXTENSION IF NOT EXISTS``
calls can both miss and one then fails on a unique violation).

Three choices are deliberate: the ``vector`` column has no width (it is the embedding model's,
and a model swap needs no migration); there is no vector index (recall is an exact scan over one
tenant, and an approximate index can miss the nearest neighbour dedup asks for); ``key`` is
collated "C" (the recency index sorts newest-first only in byte order, which is what S3 lists in).

Two additions to the design's tables: ``memory_generations``, a counter per tenant that triggers
on ``memories`` bump in the same transaction as any insert, update or delete (and every counter
on a truncate), and ``memory_changes``, the ids each of those statements touched, under the
generation it produced. The first lets a process prove with one key read that its in-memory
snapshot of a tenant still holds exactly the rows an exact scan would read; the second lets it
bring a snapshot forward by reading only the rows changed since (see ``scan``). Every
generation of a complete log has at least one row, so a generation without one is a gap — a
truncate, pruned rows, or writes made under 0.9.0's trigger — and the reader falls back to a
full read. Triggers rather than the store's own statements, so that writes from any source — an
older release during a rolling update, a hand-run DELETE — move both. A database made by 0.9.0
is upgraded in place at boot, under the same lock.
"""

from __future__ import annotations

from typing import Final

from shared.errors import SchemaError, StorageError
from shared.storage.postgres._datastore import Session

ADVISORY_LOCK_KEY: Final = 7_304_592_118_001
CREATE_EXTENSION_SQL: Final = "CREATE EXTENSION IF NOT EXISTS vector"

_LOCK_SQL: Final = "SELECT pg_advisory_xact_lock($1)"
_HAS_VECTOR_SQL: Final = "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')"
GENERATION_TRIGGERS: Final = {
    "memories_generation_insert": "AFTER INSERT ON memories REFERENCING NEW TABLE AS changed",
    "memories_generation_update": "AFTER UPDATE ON memories REFERENCING NEW TABLE AS changed",
    "memories_generation_delete": "AFTER DELETE ON memories REFERENCING OLD TABLE AS changed",
}
_HAS_TABLES_SQL: Final = f"""
SELECT to_regclass('memories') IS NOT NULL
   AND to_regclass('objects_version') IS NOT NULL
   AND to_regclass('objects') IS NOT NULL
   AND to_regclass('memory_generations') IS NOT NULL
   AND to_regclass('memory_changes') IS NOT NULL
   AND (SELECT count(*) FROM pg_trigger
        WHERE tgrelid = to_regclass('memories') AND tgname LIKE 'memories_generation_%')
       = {len(GENERATION_TRIGGERS) + 1}
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
    """
    CREATE TABLE IF NOT EXISTS memory_generations (
      tenant_id  text   PRIMARY KEY,
      generation bigint NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS memory_changes (
      tenant_id  text        NOT NULL,
      generation bigint      NOT NULL,
      id         text        NOT NULL,
      changed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, generation, id)
    )
    """,
    "CREATE INDEX IF NOT EXISTS memory_changes_changed_at ON memory_changes (changed_at)",
    # Statement-level, over the transition table: one bump per tenant per statement, taken in
    # tenant order so two statements spanning the same tenants cannot deadlock, and the ids the
    # statement touched logged under the generation it produced.
    """
    CREATE OR REPLACE FUNCTION memories_bump_generation() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      WITH bumped AS (
        INSERT INTO memory_generations AS g (tenant_id, generation)
          SELECT DISTINCT tenant_id, 1 FROM changed ORDER BY tenant_id
        ON CONFLICT (tenant_id) DO UPDATE SET generation = g.generation + 1
        RETURNING g.tenant_id, g.generation
      )
      INSERT INTO memory_changes (tenant_id, generation, id)
        SELECT DISTINCT c.tenant_id, b.generation, c.id
        FROM changed c JOIN bumped b ON b.tenant_id = c.tenant_id;
      RETURN NULL;
    END
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION memories_bump_every_generation() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE memory_generations SET generation = generation + 1;
      RETURN NULL;
    END
    $$
    """,
    *(
        f"CREATE OR REPLACE TRIGGER {name} {when} FOR EACH STATEMENT "
        "EXECUTE FUNCTION memories_bump_generation()"
        for name, when in GENERATION_TRIGGERS.items()
    ),
    "CREATE OR REPLACE TRIGGER memories_generation_truncate AFTER TRUNCATE ON memories "
    "FOR EACH STATEMENT EXECUTE FUNCTION memories_bump_every_generation()",
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
