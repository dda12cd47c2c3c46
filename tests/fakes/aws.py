"""pytest fixtures for the S3 backend: moto's S3 server and our S3 Vectors server, over real HTTP.

Both servers start once per session. Each test gets fresh buckets (unique names), so nothing needs
resetting between tests; the S3 Vectors fake's call counters are cleared per test. aiobotocore
reaches them through botocore's per-service endpoint variables (``AWS_ENDPOINT_URL_S3``,
``AWS_ENDPOINT_URL_S3VECTORS``), set with monkeypatch together with dummy credentials.

Use from a conftest.py::

    from tests.fakes.aws import moto_s3_url, s3vectors_fake, make_s3_environ, s3_environ
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Final

import pytest
from aiobotocore.session import get_session
from moto.server import ThreadedMotoServer

from shared.storage.codec import NON_FILTERABLE_KEYS
from tests.fakes.s3vectors_server import S3VectorsFake

TEST_DIM: Final = 64
_names = itertools.count()
# One session for the fixtures: its parsed service models are reused by every test.
_SESSION: Final = get_session()

MakeS3Environ = Callable[..., Awaitable[dict[str, str]]]


def point_aws_at(monkeypatch: pytest.MonkeyPatch, *, s3_url: str, s3vectors_url: str) -> None:
    """Dummy credentials through the standard chain, and the two local endpoints."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFORTESTS0000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-for-tests")
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    # A developer's ~/.aws must not leak into a test's credentials, region or endpoints.
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3VECTORS", s3vectors_url)


async def create_s3_backend(
    *,
    s3_url: str,
    s3vectors_url: str,
    vector_bucket: str,
    state_bucket: str,
    index: str = "memories",
    dimension: int = TEST_DIM,
    metric: str = "cosine",
    non_filterable: tuple[str, ...] = NON_FILTERABLE_KEYS,
    create_index: bool = True,
) -> None:
    """Create what docs/s3.md tells an operator to create, through the real APIs."""
    session = _SESSION
    region: dict[str, Any] = {"region_name": "us-east-1"}
    async with session.create_client("s3", endpoint_url=s3_url, **region) as s3:
        await s3.create_bucket(Bucket=state_bucket)
    async with session.create_client("s3vectors", endpoint_url=s3vectors_url, **region) as vec:
        await vec.create_vector_bucket(vectorBucketName=vector_bucket)
        if create_index:
            await vec.create_index(
                vectorBucketName=vector_bucket,
                indexName=index,
                dataType="float32",
                dimension=dimension,
                distanceMetric=metric,
                metadataConfiguration={"nonFilterableMetadataKeys": list(non_filterable)},
            )


def seed_s3_objects(bucket: str, keys: list[str], *, body: bytes = b"") -> None:
    """Write many objects straight into the in-process moto backend.

    moto answers ~20 ms per request, so seeding a thousand keys over HTTP would dominate a test;
    the operation under test still goes over HTTP.
    """
    from moto.core.models import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    for key in keys:
        backend.put_object(bucket, key, body)


@pytest.fixture(scope="session")
def moto_s3_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
async def s3vectors_server() -> AsyncIterator[tuple[S3VectorsFake, str]]:
    fake = S3VectorsFake()
    url = await fake.start()
    yield fake, url
    await fake.close()


@pytest.fixture
def s3vectors_fake(s3vectors_server: tuple[S3VectorsFake, str]) -> S3VectorsFake:
    """The session's S3 Vectors server, with its call counters cleared for this test."""
    fake, _ = s3vectors_server
    fake.calls.clear()
    fake.ignore_filter = False
    return fake


@pytest.fixture
def make_s3_environ(
    monkeypatch: pytest.MonkeyPatch,
    moto_s3_url: str,
    s3vectors_server: tuple[S3VectorsFake, str],
    s3vectors_fake: S3VectorsFake,
) -> MakeS3Environ:
    """A factory: fresh buckets (and index, unless told otherwise) and the environment for them.

    Keyword arguments go to :func:`create_s3_backend`; ``embedding_dim`` sets EMBEDDING_DIM
    (default: the index's dimension).
    """
    _, s3vectors_url = s3vectors_server
    point_aws_at(monkeypatch, s3_url=moto_s3_url, s3vectors_url=s3vectors_url)

    async def make(*, embedding_dim: int | None = None, **index: Any) -> dict[str, str]:
        n = next(_names)
        vector_bucket, state_bucket = f"test-vectors-{n}", f"test-state-{n}"
        await create_s3_backend(
            s3_url=moto_s3_url,
            s3vectors_url=s3vectors_url,
            vector_bucket=vector_bucket,
            state_bucket=state_bucket,
            **index,
        )
        dim = embedding_dim if embedding_dim is not None else index.get("dimension", TEST_DIM)
        return {
            "VECTOR_BUCKET": vector_bucket,
            "STATE_BUCKET": state_bucket,
            "VECTOR_INDEX": index.get("index", "memories"),
            "AWS_REGION": "us-east-1",
            "EMBEDDING_DIM": str(dim),
        }

    return make


@pytest.fixture
async def s3_environ(make_s3_environ: MakeS3Environ) -> dict[str, str]:
    """The environment selecting the S3 backend over fresh, empty buckets and index."""
    return await make_s3_environ()
