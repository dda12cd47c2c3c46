"""An unreachable database stops the boot with the URL (no password) and the cause."""

from __future__ import annotations

import socket

import asyncpg
import pytest

from shared.config import load_config
from shared.errors import StorageError, StorageUnavailableError
from shared.storage import open_stores
from shared.storage.postgres import describe
from shared.storage.postgres._datastore import redact_url, translated
from tests.conftest import with_database


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_unreachable_url_raises_unavailable_naming_the_url_without_password() -> None:
    port = _closed_port()
    url = f"postgres://memory:hunter2-secret@127.0.0.1:{port}/memory"
    with pytest.raises(StorageUnavailableError) as info:
        async with open_stores(load_config({"DATABASE_URL": url})):
            pass
    message = str(info.value)
    assert "hunter2-secret" not in message
    assert f"cannot connect to PostgreSQL at postgres://memory:***@127.0.0.1:{port}/memory" in (
        message
    )
    assert "refused" in message.lower()  # the cause
    assert isinstance(info.value.__cause__, OSError)


async def test_a_missing_database_is_unavailable_and_named(pg_server_url: str) -> None:
    url = with_database(pg_server_url, "no_such_database_here")
    with pytest.raises(StorageUnavailableError, match='database "no_such_database_here"'):
        async with open_stores(load_config({"DATABASE_URL": url})):
            pass


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgres://memory:s3cret@db:5432/memory", "postgres://memory:***@db:5432/memory"),
        ("postgres://memory@db/memory", "postgres://memory@db/memory"),
        (
            "postgresql://u@/m?host=/run/pg&password=s3cret",
            "postgresql://u@/m?host=/run/pg&password=%2A%2A%2A",
        ),
        ("postgres://u:s3cret@db:notaport/m", "<unparseable database URL>"),
    ],
)
def test_redact_url_removes_every_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3cret" not in describe(url)


def test_describe_names_both_tables_and_the_redacted_url() -> None:
    assert describe("postgres://memory:pw@postgres:5432/memory") == (
        "postgres (memories, objects) at postgres://memory:***@postgres:5432/memory"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (asyncpg.exceptions.TooManyConnectionsError("too many clients"), StorageUnavailableError),
        (asyncpg.exceptions.AdminShutdownError("terminating"), StorageUnavailableError),
        (asyncpg.exceptions.ConnectionDoesNotExistError("closed"), StorageUnavailableError),
        (ConnectionResetError("reset"), StorageUnavailableError),
        (TimeoutError(), StorageUnavailableError),
        (asyncpg.exceptions.UniqueViolationError("duplicate key"), StorageError),
        (asyncpg.exceptions.DataError("bad value"), StorageError),
        (
            ConnectionRefusedError(111, "Connect call failed ('10.1.2.3', 5432)"),
            StorageUnavailableError,
        ),
        (asyncpg.InternalClientError("cannot switch to state 12"), StorageUnavailableError),
    ],
)
def test_driver_errors_are_translated_and_chained_without_naming_the_database(
    error: Exception, expected: type[StorageError]
) -> None:
    """On a call (not at boot) the message can reach a model as a tool error: no URL, host or
    port, even when the driver's own text has one."""
    with pytest.raises(StorageError) as info, translated("postgres://u:***@db:5432/m"):
        raise error
    assert type(info.value) is expected
    assert info.value.__cause__ is error
    message = str(info.value)
    assert message.startswith("PostgreSQL ")
    for leak in ("postgres://", "db:5432", "10.1.2.3", "5432"):
        assert leak not in message, message
