"""The S3 Vectors fake enforces AWS's documented limits, answering as botocore expects."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiobotocore.session import get_session
from botocore.exceptions import ClientError

from tests.fakes.aws import MakeS3Environ

DIM = 64


@pytest.fixture
async def raw(make_s3_environ: MakeS3Environ) -> AsyncIterator[tuple[Any, dict[str, str]]]:
    environ = await make_s3_environ()
    async with get_session().create_client("s3vectors", region_name="us-east-1") as client:
        yield client, {"vectorBucketName": environ["VECTOR_BUCKET"], "indexName": "memories"}


def _vector(key: str, **metadata: object) -> dict[str, Any]:
    return {"key": key, "data": {"float32": [0.5] * DIM}, "metadata": metadata}


async def _refused(call: Any, code: str = "ValidationException", **kwargs: Any) -> str:
    with pytest.raises(ClientError) as raised:
        await call(**kwargs)
    assert raised.value.response["Error"]["Code"] == code
    return str(raised.value.response["Error"]["Message"])


async def test_limits_on_counts(raw: tuple[Any, dict[str, str]]) -> None:
    client, where = raw
    query = {"float32": [0.5] * DIM}
    assert "topK" in await _refused(client.query_vectors, topK=101, queryVector=query, **where)
    vectors = [_vector(f"k{i}") for i in range(501)]
    assert "500" in await _refused(client.put_vectors, vectors=vectors, **where)


async def test_limits_on_vectors(raw: tuple[Any, dict[str, str]]) -> None:
    client, where = raw
    short = [{"key": "k", "data": {"float32": [0.5] * (DIM - 1)}}]
    assert "dimension" in await _refused(client.put_vectors, vectors=short, **where)
    zero = [{"key": "k", "data": {"float32": [0.0] * DIM}}]
    assert "zero" in await _refused(client.put_vectors, vectors=zero, **where)


async def test_limits_on_metadata(raw: tuple[Any, dict[str, str]]) -> None:
    client, where = raw
    big_filterable = [_vector("k", category="c" * 2100)]
    assert "2048" in await _refused(client.put_vectors, vectors=big_filterable, **where)
    # The same bytes are fine where the index declared the key non-filterable.
    await client.put_vectors(vectors=[_vector("k", content="c" * 2100)], **where)
    huge = [_vector("k", content="c" * 41_000)]
    assert "40960" in await _refused(client.put_vectors, vectors=huge, **where)
    empty = [_vector("k", tags=[])]
    assert "empty" in await _refused(client.put_vectors, vectors=empty, **where)


async def test_filters_by_equality_and_refuses_non_filterable_keys(
    raw: tuple[Any, dict[str, str]],
) -> None:
    client, where = raw
    await client.put_vectors(
        vectors=[_vector("a#1", tenantId="a"), _vector("b#1", tenantId="b")], **where
    )
    query = {"float32": [0.5] * DIM}
    for expression in ({"tenantId": "a"}, {"tenantId": {"$eq": "a"}}):
        found = await client.query_vectors(topK=5, queryVector=query, filter=expression, **where)
        assert [v["key"] for v in found["vectors"]] == ["a#1"]
    message = await _refused(
        client.query_vectors, topK=5, queryVector=query, filter={"content": "x"}, **where
    )
    assert "non-filterable" in message


async def test_a_missing_index_is_not_found(raw: tuple[Any, dict[str, str]]) -> None:
    client, where = raw
    await _refused(
        client.get_index,
        "NotFoundException",
        vectorBucketName=where["vectorBucketName"],
        indexName="nope",
    )
