"""Opening the runtime: the stores and the model open side by side, and a failure of either is
reported as itself (what the boot names and callers catch), never wrapped in a group."""

from __future__ import annotations

import socket

import pytest

from services.api.runtime import open_runtime
from shared.config import load_config
from shared.errors import StorageUnavailableError


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_an_unreachable_database_stops_the_opening_with_its_own_error() -> None:
    config = load_config(
        {
            "DATABASE_URL": f"postgresql://memory@127.0.0.1:{closed_port()}/memory",
            "EMBEDDING_PROVIDER": "local",
        }
    )
    with pytest.raises(StorageUnavailableError, match=r"127\.0\.0\.1"):
        async with open_runtime(config):
            pytest.fail("the runtime opened without its database")


async def test_the_served_operations_read_relations_where_the_model_has_a_line(
    pg_url: str,
) -> None:
    """The timing wrapper the API puts around the model keeps what was measured for it."""
    config = load_config({"DATABASE_URL": pg_url, "EMBEDDING_PROVIDER": "local"})
    async with open_runtime(config) as runtime:
        assert runtime.operations is not None
        assert runtime.operations.relations is not None
