"""The one place that names a backend. Each is imported lazily inside its branch, so the AWS
SDK is never loaded under PostgreSQL and asyncpg never under S3."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from shared.config import Config
from shared.storage.interfaces import Stores


@contextlib.asynccontextmanager
async def open_stores(config: Config) -> AsyncIterator[Stores]:
    """Open the configured backend (creating its schema where it has one) and close it after.

    Raises:
        StorageUnavailableError, SchemaError: the backend could not be opened; boot stops.
    """
    if config.backend == "s3":
        from shared.storage.s3 import open_s3_stores

        async with open_s3_stores(config) as stores:
            yield stores
    else:
        from shared.storage.postgres import open_postgres_stores

        async with open_postgres_stores(config) as stores:
            yield stores
