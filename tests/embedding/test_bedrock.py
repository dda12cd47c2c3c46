"""BedrockEmbedder against a real HTTP server speaking InvokeModel, through aiobotocore."""

from __future__ import annotations

import socket

import pytest

from shared.config import load_config
from shared.embedding import open_embedder
from shared.embedding.bedrock import BedrockEmbedder
from shared.errors import EmbeddingError
from tests.fakes._vectors import cosine, text_vector
from tests.fakes.bedrock_runtime import TITAN_V2, Failure, FakeBedrockRuntime

TEXT = "The staging cluster runs in ap-northeast-2 behind a private ALB"


async def open_fake(
    fake: FakeBedrockRuntime, *, dim: int = 1024, max_attempts: int = 1
) -> BedrockEmbedder:
    return await BedrockEmbedder.open(
        model=TITAN_V2,
        dim=dim,
        region="us-east-1",
        endpoint_url=fake.base_url,
        max_attempts=max_attempts,
    )


async def test_factory_embeds_through_signed_invoke_model(
    bedrock_runtime: FakeBedrockRuntime,
) -> None:
    config = load_config(
        {
            "DATABASE_URL": "postgres://memory@db/memory",
            "AWS_REGION": "eu-west-1",
            "AWS_ENDPOINT_URL": bedrock_runtime.base_url,
        }
    )
    async with open_embedder(config) as embedder:
        assert isinstance(embedder, BedrockEmbedder)
        vector = await embedder.embed(TEXT)

    assert len(vector) == 1024
    assert cosine(vector, text_vector(TEXT, 1024)) == pytest.approx(1.0)
    (request,) = bedrock_runtime.requests
    assert request.path == f"/model/{TITAN_V2}/invoke"
    assert request.body == {"inputText": TEXT, "dimensions": 1024, "normalize": True}
    assert request.headers["Content-Type"] == "application/json"
    authorization = request.headers["Authorization"]
    # SigV4 from the standard chain (the fixture's env keys), scoped to the configured region.
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIAFAKEFORTESTS0000/")
    assert "/eu-west-1/bedrock/aws4_request" in authorization


async def test_dimensions_follow_embedding_dim(bedrock_runtime: FakeBedrockRuntime) -> None:
    embedder = await open_fake(bedrock_runtime, dim=256)
    try:
        assert len(await embedder.embed(TEXT)) == 256
    finally:
        await embedder.close()
    assert bedrock_runtime.requests[0].body["dimensions"] == 256


@pytest.mark.parametrize(
    ("knob", "value", "expected"),
    [
        ("width", 512, "returned a 512-dimension embedding but EMBEDDING_DIM is 1024"),
        ("all_zero", True, "all-zero embedding"),
        ("non_numeric", True, "had no embedding in it"),
        ("no_embedding", True, "had no embedding in it"),
    ],
)
async def test_unusable_vectors_are_refused(
    bedrock_runtime: FakeBedrockRuntime, knob: str, value: object, expected: str
) -> None:
    setattr(bedrock_runtime.knobs, knob, value)
    embedder = await open_fake(bedrock_runtime)
    try:
        with pytest.raises(EmbeddingError, match=expected) as caught:
            await embedder.embed(TEXT)
    finally:
        await embedder.close()
    assert TITAN_V2 in str(caught.value)


async def test_width_error_says_the_index_cannot_change(
    bedrock_runtime: FakeBedrockRuntime,
) -> None:
    bedrock_runtime.knobs.width = 1536
    embedder = await open_fake(bedrock_runtime)
    try:
        with pytest.raises(EmbeddingError, match="cannot be changed after it is created"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


async def test_validation_exception_is_reported_with_its_cause(
    bedrock_runtime: FakeBedrockRuntime,
) -> None:
    bedrock_runtime.knobs.failure = Failure(400, "ValidationException", "Input is too long")
    embedder = await open_fake(bedrock_runtime, max_attempts=3)
    try:
        with pytest.raises(EmbeddingError) as caught:
            await embedder.embed(TEXT)
    finally:
        await embedder.close()
    message = str(caught.value)
    assert message.startswith("Bedrock could not embed the text")
    assert "ValidationException" in message
    assert "Input is too long" in message
    assert len(bedrock_runtime.requests) == 1, "a 400 is not retried"


async def test_server_error_is_reported(bedrock_runtime: FakeBedrockRuntime) -> None:
    bedrock_runtime.knobs.failure = Failure(500, "InternalServerException", "the model broke")
    embedder = await open_fake(bedrock_runtime)
    try:
        with pytest.raises(
            EmbeddingError, match=r"Bedrock could not embed.*InternalServerException"
        ):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


async def test_one_transient_failure_is_retried(bedrock_runtime: FakeBedrockRuntime) -> None:
    bedrock_runtime.knobs.failure = Failure(503, "ServiceUnavailableException", "try again")
    bedrock_runtime.knobs.fail_times = 1
    embedder = await open_fake(bedrock_runtime, max_attempts=2)
    try:
        assert len(await embedder.embed(TEXT)) == 1024
    finally:
        await embedder.close()
    assert len(bedrock_runtime.requests) == 2


async def test_unreachable_endpoint_is_reported(aws_test_credentials: None) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = await BedrockEmbedder.open(
        model=TITAN_V2,
        dim=1024,
        region="us-east-1",
        endpoint_url=f"http://127.0.0.1:{port}",
        max_attempts=1,
    )
    try:
        with pytest.raises(EmbeddingError, match="Bedrock could not embed the text"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()
