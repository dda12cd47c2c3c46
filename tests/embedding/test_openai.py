"""OpenAIEmbedder against a real HTTP server speaking POST /v1/embeddings."""

from __future__ import annotations

import socket

import pytest

from shared.config import load_config
from shared.embedding import open_embedder
from shared.embedding.openai import OpenAIEmbedder
from shared.errors import EmbeddingError
from tests.fakes._vectors import cosine, text_vector
from tests.fakes.openai_embeddings import Failure, FakeOpenAIEmbeddings

TEXT = "Run migrations with make migrate before starting the API locally"
MODEL = "text-embedding-3-small"


def embedder_for(fake: FakeOpenAIEmbeddings, *, timeout_s: float = 10.0) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        fake.base_url, api_key=fake.api_key, model=MODEL, dim=fake.dim, timeout_s=timeout_s
    )


async def test_factory_posts_model_and_input_with_bearer_key(
    openai_embeddings: FakeOpenAIEmbeddings,
) -> None:
    config = load_config(
        {
            "DATABASE_URL": "postgres://memory@db/memory",
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_BASE_URL": openai_embeddings.base_url + "/",
            "EMBEDDING_API_KEY": openai_embeddings.api_key,
        }
    )
    async with open_embedder(config) as embedder:
        assert isinstance(embedder, OpenAIEmbedder)
        vector = await embedder.embed(TEXT)

    assert len(vector) == 1536
    assert cosine(vector, text_vector(TEXT, 1536)) == pytest.approx(1.0)
    (request,) = openai_embeddings.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": MODEL, "input": TEXT}
    assert request.headers["Authorization"] == f"Bearer {openai_embeddings.api_key}"


async def test_embed_many_sends_one_list_request_and_keeps_order(
    openai_embeddings: FakeOpenAIEmbeddings,
) -> None:
    texts = ["first fact about deploys", "second fact about billing", "third fact about tests"]
    embedder = embedder_for(openai_embeddings)
    try:
        vectors = await embedder.embed_many(texts)
        assert await embedder.embed_many([]) == []
    finally:
        await embedder.close()
    assert len(openai_embeddings.requests) == 1
    assert openai_embeddings.requests[0].body["input"] == texts
    for text, vector in zip(texts, vectors, strict=True):
        assert cosine(vector, text_vector(text, 1536)) == pytest.approx(1.0)


async def test_timeout_names_the_limit_in_ms(openai_embeddings: FakeOpenAIEmbeddings) -> None:
    openai_embeddings.knobs.delay_s = 1.0
    embedder = embedder_for(openai_embeddings, timeout_s=0.2)
    try:
        with pytest.raises(EmbeddingError, match="did not respond within 200ms"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


def test_default_timeout_is_ten_seconds() -> None:
    from shared.embedding.openai import DEFAULT_TIMEOUT_S

    assert DEFAULT_TIMEOUT_S == 10.0


async def test_unreachable_service_is_reported() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", api_key="k", model=MODEL, dim=1536)
    try:
        with pytest.raises(EmbeddingError, match="could not be reached"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


async def test_error_status_carries_the_first_200_characters(
    openai_embeddings: FakeOpenAIEmbeddings,
) -> None:
    long_message = "model overloaded " + "x" * 400
    openai_embeddings.knobs.failure = Failure(503, "overloaded", long_message)
    embedder = embedder_for(openai_embeddings)
    try:
        with pytest.raises(EmbeddingError) as caught:
            await embedder.embed(TEXT)
    finally:
        await embedder.close()
    message = str(caught.value)
    assert "HTTP 503" in message
    body = message.split("HTTP 503: ", 1)[1]
    assert len(body) == 200
    assert body.startswith('{"error": {"message": "model overloaded xxx')


async def test_wrong_key_is_reported_as_401(openai_embeddings: FakeOpenAIEmbeddings) -> None:
    embedder = OpenAIEmbedder(openai_embeddings.base_url, api_key="wrong", model=MODEL, dim=1536)
    try:
        with pytest.raises(EmbeddingError, match=r"HTTP 401.*Incorrect API key"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


@pytest.mark.parametrize(
    ("knob", "value", "expected"),
    [
        ("width", 768, "returned a 768-dimension embedding but EMBEDDING_DIM is 1536"),
        ("all_zero", True, "all-zero embedding"),
        ("non_numeric", True, "had no embedding in it"),
    ],
)
async def test_unusable_vectors_are_refused(
    openai_embeddings: FakeOpenAIEmbeddings, knob: str, value: object, expected: str
) -> None:
    setattr(openai_embeddings.knobs, knob, value)
    embedder = embedder_for(openai_embeddings)
    try:
        with pytest.raises(EmbeddingError, match=expected):
            await embedder.embed(TEXT)
        with pytest.raises(EmbeddingError, match=expected):
            await embedder.embed_many([TEXT, "another"])
    finally:
        await embedder.close()


async def test_a_200_without_embeddings_is_refused(openai_embeddings: FakeOpenAIEmbeddings) -> None:
    openai_embeddings.knobs.no_embedding = True
    embedder = embedder_for(openai_embeddings)
    try:
        with pytest.raises(EmbeddingError, match=f"response from {MODEL} had no embedding in it"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()


async def test_a_wrong_base_url_reports_the_status(openai_embeddings: FakeOpenAIEmbeddings) -> None:
    base_without_v1 = openai_embeddings.base_url.removesuffix("/v1")
    embedder = OpenAIEmbedder(base_without_v1, api_key="k", model=MODEL, dim=1536)
    try:
        with pytest.raises(EmbeddingError, match="HTTP 404"):
            await embedder.embed(TEXT)
    finally:
        await embedder.close()
