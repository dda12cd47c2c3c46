"""Fixtures for the whole suite: a clean environment, and real PostgreSQL databases.

``pg_server_url`` is one PostgreSQL server for the session: ``TEST_DATABASE_URL`` when set (CI,
or a developer's pgvector/pgvector container), otherwise the embedded pgserver started here in a
temporary dir. PostgreSQL tests therefore never skip. ``pg_url`` is a fresh, empty database on
that server for each test (no extension, no tables), dropped afterwards.

Both are synchronous on purpose: they work from sync and async tests alike, whatever event loop
a test runs on, because their own queries run on a private loop in a worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
import pytest

from shared.storage.postgres.embedded import acquire_server, release_server

# Fixtures for the fake remote services (moto S3, S3 Vectors, Bedrock, OpenAI), for every test.
pytest_plugins = ["tests.fakes.fixtures", "tests.fakes.aws"]

# Variables the service reads; a developer's own settings must not leak into a test.
CLEARED_ENV_PREFIXES = (
    "MCP_",
    "AWS_",
    "EMBEDDING_",
    "DATABASE_URL",
    "VECTOR_",
    "STATE_",
    "KNOWLEDGE_BASE_ID",
    "RECALL_",
    "STATS_",
    "COMPACTOR_",
    # Deadlines (STORAGE_TIMEOUT_S, TOOL_TIMEOUT_S): a developer's own must not reach tests.
    "STORAGE_",
    # LOG_FORMAT=text would put a banner and text lines where tests read JSON lines.
    "LOG_FORMAT",
    "TOOL_",
    "UI_",
)

_database_numbers = itertools.count()


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(CLEARED_ENV_PREFIXES):
            monkeypatch.delenv(name)
    # Every embedded server a test starts stops with its last process (the servers a test
    # spawns inherit this); the tests of the grace itself set their own.
    monkeypatch.setenv("PG_EMBEDDED_GRACE_S", "0")


def with_database(url: str, database: str) -> str:
    """``url`` pointing at another database on the same server."""
    parts = urlsplit(url)
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, database if k == "dbname" else v) for k, v in pairs], safe="/")
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", query, parts.fragment))


def run_admin(url: str, *statements: str) -> None:
    """Run statements on their own connection and event loop, from any thread or loop."""

    async def run() -> None:
        connection = await asyncpg.connect(url, timeout=10)
        try:
            for statement in statements:
                await connection.execute(statement)
        finally:
            await connection.close()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, run()).result(timeout=60)


@contextlib.contextmanager
def _embedded_data_dir() -> Iterator[Path]:
    # Not under pytest's tmp_path: as root, pgserver runs PostgreSQL as the `pgserver` user,
    # which must traverse every parent folder, and each pytest session that starts chmods
    # /tmp/pytest-of-root back to 0700 — a concurrent run would pull the floor from under a
    # running server (it PANICs on "Permission denied").
    data_dir = Path(tempfile.mkdtemp(prefix="mcp-memory-test-"))
    try:
        yield data_dir
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture
def embedded_data_dir() -> Iterator[Path]:
    """An empty data dir for an embedded database (``--local``), removed after the test.

    Use this rather than ``tmp_path`` for anything that starts the embedded server.
    """
    with _embedded_data_dir() as data_dir:
        yield data_dir


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """A PostgreSQL server whose role may create databases (and, embedded, is superuser)."""
    configured = os.environ.get("TEST_DATABASE_URL", "").strip()
    if configured:
        yield configured
        return
    with _embedded_data_dir() as data_dir:
        url = acquire_server(data_dir)
        try:
            # A throwaway server: durability buys nothing and fsync dominates CREATE DATABASE.
            run_admin(
                url,
                "ALTER SYSTEM SET fsync = off",
                "ALTER SYSTEM SET synchronous_commit = off",
                "ALTER SYSTEM SET full_page_writes = off",
                "SELECT pg_reload_conf()",
            )
            yield url
        finally:
            release_server(data_dir)


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """The URL of a fresh, empty database for this test alone."""
    name = f"test_{os.getpid()}_{next(_database_numbers)}"
    run_admin(pg_server_url, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(pg_server_url, name)
    finally:
        # FORCE ends connections a test left open, so a leak cannot block the next test.
        run_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def processes() -> AsyncIterator[list[Any]]:
    """Server processes a test started (tests.api._process.ApiProcess), killed at its end if it
    left them running."""
    from tests.api._process import stop  # that module imports this one

    started: list[Any] = []
    yield started
    for process in started:
        await stop(process)
