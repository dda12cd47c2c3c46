"""The operator tests' fixtures shared by module: a store on each backend."""

from __future__ import annotations

import pytest

from tests.operator.test_transfer import postgres_env, s3_env

__all__ = ["postgres_env", "s3_env", "store_env"]


@pytest.fixture(params=["postgres", "s3"])
def store_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The environment of an empty store: PostgreSQL, then S3 (moto and the S3 Vectors fake)."""
    if request.param == "postgres":
        env: dict[str, str] = request.getfixturevalue("postgres_env")()
        return env
    s3: dict[str, str] = request.getfixturevalue("s3_env")
    return s3
