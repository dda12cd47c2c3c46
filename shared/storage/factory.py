"""The one place that names a backend. Each is imported lazily inside its branch, so the AWS
SDK is never loaded under PostgreSQL and asyncpg never under S3."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

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
        from shared.storage.postgres.stores import open_postgres_stores

        async with open_postgres_stores(config) as stores:
            yield stores


def watch_embedded_server(config: Config, stop: asyncio.Event) -> Callable[[], bool]:
    """Under ``--local``, watch the embedded server and set ``stop`` once it dies. Returns a
    function the process calls on its way out: True when the server died (the process then
    exits 1, so what supervises it restarts both), and it stops the watch. For any other backend
    it always answers False, and the PostgreSQL modules are not loaded."""
    if config.backend != "embedded" or config.postgres.data_dir is None:
        return lambda: False
    from shared.storage.postgres.embedded_watch import died, stop_when_dead

    watcher = stop_when_dead(config.postgres.data_dir, stop)
    return lambda: died(watcher)


def start_early(config: Config) -> None:
    """Under ``--local``, start the embedded server now, when this process is to start it: it
    comes up in a process of its own while this one imports and opens the rest of itself, and
    ``open_stores`` joins it. Nothing for any other backend."""
    data_dir = config.postgres.data_dir
    if config.backend != "embedded" or data_dir is None or not config.postgres.embedded_start:
        return
    from shared.storage.postgres import embedded

    embedded.start_early(data_dir, grace_s=config.postgres.embedded_grace_s or 0.0)


def embedded_server_running(config: Config) -> bool:
    """Under ``--local``, whether the embedded server runs now; False for any other backend."""
    if config.backend != "embedded" or config.postgres.data_dir is None:
        return False
    from shared.storage.postgres.embedded_watch import server_alive

    return server_alive(config.postgres.data_dir)
