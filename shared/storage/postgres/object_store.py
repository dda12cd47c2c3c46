"""Small mutable objects in the ``objects`` table (what ordinary S3 holds).

The row version stands in for the ETag. Every write draws it from one sequence for the whole
table, so a key that is deleted and re-created can never accept an etag read before the delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from shared.errors import ConflictError, InvalidInputError
from shared.storage.interfaces import GET_MANY_BATCH, ObjectStore, StoredObject, WriteCondition
from shared.storage.postgres._datastore import STORE_NAME, PostgresDatastore

_GET_SQL: Final = "SELECT body, version::text AS etag FROM objects WHERE key = $1"
_GET_MANY_SQL: Final = (
    "SELECT key, body, version::text AS etag FROM objects WHERE key = ANY($1::text[])"
)
_ETAG_SQL: Final = "SELECT version::text FROM objects WHERE key = $1"
_PUT_SQL: Final = """
INSERT INTO objects (key, body, version) VALUES ($1, $2, nextval('objects_version'))
ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version,
                                updated_at = now()
RETURNING version::text
"""
# Compared as text so that a foreign etag (an S3 one, quotes and all) simply matches nothing.
# Two writers naming the same etag serialise on the row lock, and the second re-reads the
# row, sees the new version and updates nothing: exactly one wins.
_PUT_IF_MATCH_SQL: Final = """
UPDATE objects SET body = $2, version = nextval('objects_version'), updated_at = now()
WHERE key = $1 AND version::text = $3
RETURNING version::text
"""
_PUT_IF_NONE_MATCH_SQL: Final = """
INSERT INTO objects (key, body, version) VALUES ($1, $2, nextval('objects_version'))
ON CONFLICT (key) DO NOTHING
RETURNING version::text
"""
# starts_with keeps `_` and `%` literal (LIKE would read them as wildcards); `key >= $1` only
# lets the primary key's byte-ordered index bound the scan.
_LIST_SQL: Final = """
SELECT key FROM objects
WHERE key >= $1 AND starts_with(key, $1) AND key > $2
ORDER BY key LIMIT $3
"""
_DELETE_SQL: Final = "DELETE FROM objects WHERE key = ANY($1::text[])"


class PostgresObjectStore(ObjectStore):
    """ObjectStore over one table with a row version as the etag."""

    display_name = STORE_NAME

    def __init__(self, datastore: PostgresDatastore) -> None:
        self._datastore = datastore

    async def get(self, key: str) -> StoredObject | None:
        rows = await self._datastore.fetch(_GET_SQL, key)
        if not rows:
            return None
        return StoredObject(body=rows[0]["body"], etag=rows[0]["etag"])

    async def get_many(self, keys: Sequence[str]) -> dict[str, StoredObject]:
        """One query per ``GET_MANY_BATCH`` keys, where ``get`` costs a round trip per key."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, StoredObject] = {}
        for start in range(0, len(wanted), GET_MANY_BATCH):
            chunk = wanted[start : start + GET_MANY_BATCH]
            for row in await self._datastore.fetch(_GET_MANY_SQL, chunk):
                found[row["key"]] = StoredObject(body=row["body"], etag=row["etag"])
        return found

    async def etag(self, key: str) -> str | None:
        value = await self._datastore.fetchval(_ETAG_SQL, key)
        return None if value is None else str(value)

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        if_match = condition.if_match
        if if_match is not None:
            etag = await self._datastore.fetchval(_PUT_IF_MATCH_SQL, key, body, if_match)
            if etag is None:
                raise ConflictError(f"{key} changed since etag {if_match} was read")
        elif condition.if_none_match:
            etag = await self._datastore.fetchval(_PUT_IF_NONE_MATCH_SQL, key, body)
            if etag is None:
                raise ConflictError(f"{key} already exists")
        else:
            etag = await self._datastore.fetchval(_PUT_SQL, key, body)
        return str(etag)

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        if limit < 1:
            raise InvalidInputError("limit", f"limit must be at least 1, got {limit}")
        rows = await self._datastore.fetch(_LIST_SQL, prefix, start_after or "", limit)
        return [row["key"] for row in rows]

    async def delete(self, keys: Sequence[str]) -> None:
        if keys:
            await self._datastore.execute(_DELETE_SQL, list(keys))
