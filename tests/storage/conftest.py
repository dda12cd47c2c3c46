"""Store fixtures for the contract suites, parametrised by backend.

Adding a backend is one more entry in ``BACKENDS`` and one more branch in ``_environ_for``: the
contract modules receive ``vector_store`` / ``object_store`` and never import a backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared.config import Config, load_config
from shared.storage import ObjectStore, Stores, VectorStore, open_stores
from tests.fakes.aws import (  # noqa: F401  (S3 server fixtures, registered by import)
    make_s3_environ,
    moto_s3_url,
    s3_environ,
    s3vectors_fake,
    s3vectors_server,
)

BACKENDS = ["postgres", "s3"]


def _environ_for(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment that selects ``backend``, pointing at a fresh, empty store."""
    if backend == "postgres":
        return {"DATABASE_URL": request.getfixturevalue("pg_url")}
    if backend == "s3":
        environ: dict[str, str] = request.getfixturevalue("s3_environ")
        return environ
    raise AssertionError(f"no test environment for the {backend} backend")


@pytest.fixture(params=BACKENDS)
def storage_config(request: pytest.FixtureRequest) -> Config:
    return load_config(_environ_for(request.param, request))


@pytest.fixture
async def stores(storage_config: Config) -> AsyncIterator[Stores]:
    async with open_stores(storage_config) as opened:
        yield opened


@pytest.fixture
def vector_store(stores: Stores) -> VectorStore:
    return stores.vectors


@pytest.fixture
def object_store(stores: Stores) -> ObjectStore:
    return stores.objects


@pytest.fixture
def embedding_dim(storage_config: Config) -> int:
    """The width every vector in a contract test has (an S3 Vectors index fixes one)."""
    return storage_config.embedding.dim
