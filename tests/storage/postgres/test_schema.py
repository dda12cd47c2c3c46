"""Schema creation at boot: once, under the advisory lock, and a clear refusal without pgvector."""

from __future__ import annotations

import logging
import uuid
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from shared.config import load_config
from shared.errors import SchemaError
from shared.storage import open_stores
from shared.storage.postgres.schema import missing_extension_message
from tests.conftest import run_admin
from tests.storage.postgres._boot import log_lines, start_boot


async def _catalog(url: str) -> dict[str, object]:
    connection = await asyncpg.connect(url)
    try:
        return {
            "extensions": await connection.fetchval(
                "SELECT count(*) FROM pg_extension WHERE extname = 'vector'"
            ),
            "relations": sorted(
                await connection.fetchval(
                    "SELECT coalesce(array_agg(relname::text), '{}') FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'"
                )
            ),
            "key_collation": await connection.fetchval(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = 'objects' AND column_name = 'key'"
            ),
            "embedding_typmod": await connection.fetchval(
                "SELECT atttypmod FROM pg_attribute "
                "WHERE attrelid = to_regclass('memories') AND attname = 'embedding'"
            ),
            "triggers": sorted(
                await connection.fetchval(
                    "SELECT coalesce(array_agg(tgname::text), '{}') FROM pg_trigger "
                    "WHERE tgrelid = to_regclass('memories')"
                )
            ),
        }
    finally:
        await connection.close()


EXPECTED_CATALOG = {
    "extensions": 1,
    # No vector index, by design: the primary keys and the change log's time index (pruning).
    "relations": [
        "memories",
        "memories_pkey",
        "memory_changes",
        "memory_changes_changed_at",
        "memory_changes_pkey",
        "memory_generations",
        "memory_generations_pkey",
        "objects",
        "objects_pkey",
        "objects_version",
    ],
    "key_collation": "C",
    "embedding_typmod": -1,  # no width
    # What keeps each tenant's generation in step with its rows (see scan_cache).
    "triggers": [
        "memories_generation_delete",
        "memories_generation_insert",
        "memories_generation_truncate",
        "memories_generation_update",
    ],
}


async def test_five_processes_booting_at_once_all_come_up_and_create_the_schema_once(
    pg_url: str,
) -> None:
    processes = [start_boot(DATABASE_URL=pg_url) for _ in range(5)]
    results = [process.communicate(timeout=60) for process in processes]
    for process, (stdout, stderr) in zip(processes, results, strict=True):
        assert process.returncode == 0, stderr
        assert "BOOTED" in stdout
    outcomes = sorted(
        str(line["schema"])
        for stdout, _ in results
        for line in log_lines(stdout)
        if line["event"] == "postgres_stores_open"
    )
    assert outcomes == ["created", "found", "found", "found", "found"]
    assert await _catalog(pg_url) == EXPECTED_CATALOG


async def test_a_second_boot_finds_the_schema_and_keeps_the_data(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config({"DATABASE_URL": pg_url})
    caplog.set_level(logging.INFO, logger="shared.storage.postgres")
    async with open_stores(config) as stores:
        await stores.objects.put("k", "kept")
    async with open_stores(config) as stores:
        stored = await stores.objects.get("k")
    assert stored is not None and stored.body == "kept"
    schema = [
        getattr(r, "schema", None)
        for r in caplog.records
        if r.getMessage() == "postgres_stores_open"
    ]
    assert schema == ["created", "found"]
    assert await _catalog(pg_url) == EXPECTED_CATALOG


def _as_role(url: str, role: str, password: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{role}:{password}@{host}", parts.path, parts.query, ""))


async def test_a_role_that_cannot_create_the_extension_is_told_what_to_run(
    pg_server_url: str, pg_url: str
) -> None:
    role = f"app_{uuid.uuid4().hex[:12]}"
    run_admin(pg_server_url, f"CREATE ROLE {role} LOGIN NOSUPERUSER PASSWORD 'app-pw'")
    try:
        config = load_config({"DATABASE_URL": _as_role(pg_url, role, "app-pw")})
        with pytest.raises(SchemaError) as info:
            async with open_stores(config):
                pass
        message = str(info.value)
        assert "run `CREATE EXTENSION vector` once as a superuser" in message
        assert "pgvector/pgvector" in message
        assert "permission denied to create extension" in message  # the server's own reason
        assert await _catalog(pg_url) == {
            "extensions": 0,
            "relations": [],
            "key_collation": None,
            "embedding_typmod": None,
            "triggers": [],
        }
    finally:
        run_admin(pg_server_url, f"DROP ROLE IF EXISTS {role}")


def test_the_missing_extension_message_carries_the_cause() -> None:
    message = missing_extension_message("permission denied")
    assert message.endswith("— permission denied")
    assert "CREATE EXTENSION vector" in message
