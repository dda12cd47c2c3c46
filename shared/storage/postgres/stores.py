"""Opening the PostgreSQL backend's two stores over one database (``DATABASE_URL``, or the
embedded server a data dir keeps)."""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

from shared.config import Config
from shared.errors import ConfigError
from shared.storage.interfaces import Stores
from shared.storage.postgres._datastore import STORE_NAME, PostgresDatastore, redact_url
from shared.storage.postgres.embedded import describe as describe_embedded
from shared.storage.postgres.embedded import embedded_database
from shared.storage.postgres.object_store import PostgresObjectStore
from shared.storage.postgres.scan import ScanCache, SnapshotVectorStore, prune_change_log
from shared.storage.postgres.schema import ensure_schema
from shared.storage.postgres.space import space_check
from shared.storage.postgres.vector_store import PostgresVectorStore, rebuild

logger = logging.getLogger(__name__)


def describe(url: str) -> str:
    """The boot line's store description: where the data lives, never the password."""
    return f"postgres (memories, objects) at {redact_url(url)}"


@contextlib.asynccontextmanager
async def _open_url(
    url: str, *, description: str, scan_cache_mb: int, data_dir: Path | None = None
) -> AsyncIterator[Stores]:
    started = time.monotonic()
    async with PostgresDatastore.open(url, prepare=ensure_schema) as (datastore, created):
        logger.info(
            "postgres_stores_open",
            extra={
                "store": description,
                "schema": "created" if created else "found",
                "ms": round((time.monotonic() - started) * 1000),
            },
        )
        plain = PostgresVectorStore(datastore)
        # The plain store inside its snapshots, unless PG_SCAN_CACHE_MB is 0 (SQL every time).
        budget = scan_cache_mb * 1024 * 1024
        snapshots = ScanCache(datastore, budget_bytes=budget, rebuild=rebuild) if budget else None
        try:
            yield Stores(
                vectors=SnapshotVectorStore(plain, snapshots) if snapshots is not None else plain,
                objects=PostgresObjectStore(datastore),
                description=description,
                snapshots=snapshots,
                housekeeping=functools.partial(prune_change_log, datastore),
                # The embedded data dir's filesystem is ours to look at; a server's is not.
                space=space_check(datastore.space, store=STORE_NAME, data_dir=data_dir),
            )
        finally:
            if snapshots is not None:  # stop background reads before the pool closes
                await snapshots.close()


@contextlib.asynccontextmanager
async def open_postgres_stores(config: Config) -> AsyncIterator[Stores]:
    """Open both stores (creating the schema if missing) and close the pool afterwards.

    Raises:
        StorageUnavailableError: the database (or the embedded server) cannot be reached.
        SchemaError: the pgvector extension is missing and cannot be created.
    """
    if config.backend == "embedded":
        if config.postgres.data_dir is None:
            raise ConfigError("the embedded database needs a data dir (--data-dir)")
        async with embedded_database(
            config.postgres.data_dir,
            grace_s=config.postgres.embedded_grace_s or 0.0,
            start=config.postgres.embedded_start,
        ) as url:
            async with _open_url(
                url,
                description=describe_embedded(config.postgres.data_dir),
                scan_cache_mb=config.postgres.scan_cache_mb,
                data_dir=config.postgres.data_dir,
            ) as stores:
                yield stores
    elif config.backend == "postgres":
        if config.postgres.database_url is None:
            raise ConfigError("DATABASE_URL is required for the PostgreSQL backend")
        async with _open_url(
            config.postgres.database_url,
            description=describe(config.postgres.database_url),
            scan_cache_mb=config.postgres.scan_cache_mb,
        ) as stores:
            yield stores
    else:
        raise ConfigError(f"open_postgres_stores cannot open the {config.backend} backend")
