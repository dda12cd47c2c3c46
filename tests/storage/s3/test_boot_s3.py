"""Opening the S3 backend: what it checks before the port is bound, and what it never loads."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

import pytest

from shared.config import load_config
from shared.errors import StorageUnavailableError
from shared.storage import open_stores
from tests.fakes.aws import MakeS3Environ

REPO_ROOT = Path(__file__).resolve().parents[3]


async def _open(environ: dict[str, str]) -> str:
    async with open_stores(load_config(environ)) as stores:
        return stores.description


async def test_opens_and_describes_both_buckets(make_s3_environ: MakeS3Environ) -> None:
    environ = await make_s3_environ()
    assert await _open(environ) == (
        f"store: s3vectors://{environ['VECTOR_BUCKET']}/memories, "
        f"state: s3://{environ['STATE_BUCKET']}"
    )


async def test_refuses_an_index_of_another_dimension_naming_both(
    make_s3_environ: MakeS3Environ,
) -> None:
    environ = await make_s3_environ(dimension=48, embedding_dim=64)
    with pytest.raises(StorageUnavailableError) as raised:
        await _open(environ)
    message = str(raised.value)
    assert "dimension 48" in message and "EMBEDDING_DIM is 64" in message


async def test_refuses_a_missing_index_naming_it(make_s3_environ: MakeS3Environ) -> None:
    environ = await make_s3_environ(create_index=False)
    with pytest.raises(StorageUnavailableError) as raised:
        await _open(environ)
    assert f"s3vectors://{environ['VECTOR_BUCKET']}/memories does not exist" in str(raised.value)


async def test_refuses_a_missing_vector_bucket(make_s3_environ: MakeS3Environ) -> None:
    environ = {**await make_s3_environ(), "VECTOR_BUCKET": "no-such-vector-bucket"}
    with pytest.raises(StorageUnavailableError, match="no-such-vector-bucket"):
        await _open(environ)


async def test_refuses_a_euclidean_index(make_s3_environ: MakeS3Environ) -> None:
    environ = await make_s3_environ(metric="euclidean")
    with pytest.raises(StorageUnavailableError, match="euclidean"):
        await _open(environ)


async def test_refuses_an_index_without_the_four_non_filterable_keys(
    make_s3_environ: MakeS3Environ,
) -> None:
    environ = await make_s3_environ(non_filterable=("content",))
    with pytest.raises(StorageUnavailableError, match="content, createdAt, tags, trustBase"):
        await _open(environ)


async def test_refuses_a_missing_state_bucket_naming_it(make_s3_environ: MakeS3Environ) -> None:
    environ = {**await make_s3_environ(), "STATE_BUCKET": "no-such-state-bucket"}
    with pytest.raises(StorageUnavailableError, match="s3://no-such-state-bucket does not exist"):
        await _open(environ)


async def test_refuses_an_unreachable_endpoint(
    make_s3_environ: MakeS3Environ, monkeypatch: pytest.MonkeyPatch
) -> None:
    environ = await make_s3_environ()
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3VECTORS", "http://127.0.0.1:9")
    with pytest.raises(StorageUnavailableError, match="could not reach AWS"):
        await _open(environ)


async def test_credentials_never_reach_the_logs(
    make_s3_environ: MakeS3Environ, caplog: pytest.LogCaptureFixture
) -> None:
    environ = await make_s3_environ(create_index=False)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(StorageUnavailableError) as raised:
        await _open(environ)
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    assert secret not in caplog.text
    assert secret not in str(raised.value)


# Boots the S3 backend in a fresh interpreter and reports which drivers got imported.
_BOOT = """
import asyncio, json, os, sys
from shared.config import load_config
from shared.storage import open_stores

async def main():
    async with open_stores(load_config(os.environ)) as stores:
        await stores.objects.list("", limit=1)
    print(json.dumps({m: m in sys.modules for m in ("asyncpg", "pgvector", "aiobotocore")}))

asyncio.run(main())
"""


async def test_the_s3_backend_never_imports_the_postgresql_driver(
    make_s3_environ: MakeS3Environ,
) -> None:
    environ = await make_s3_environ()
    child_env = {**os.environ, **environ, "PYTHONPATH": str(REPO_ROOT)}
    # Asynchronously, so this loop keeps serving the S3 Vectors server the child talks to.
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _BOOT,
        env=child_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(child.communicate(), timeout=60)
    assert child.returncode == 0, stderr.decode()[-2000:]
    loaded = json.loads(stdout.decode().strip().splitlines()[-1])
    assert loaded == {"asyncpg": False, "pgvector": False, "aiobotocore": True}
