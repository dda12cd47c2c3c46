"""The local all-MiniLM-L6-v2 embedder, with the real int8 ONNX model."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator

import pytest

from shared.config import load_config
from shared.embedding import open_embedder
from shared.embedding.local import MODEL_DIM, MODEL_NAME, LocalEmbedder
from shared.errors import ConfigError, EmbeddingError


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
async def local() -> AsyncIterator[LocalEmbedder]:
    embedder = await LocalEmbedder.open()
    yield embedder
    await embedder.close()


async def test_vectors_are_384_wide_and_unit_length(local: LocalEmbedder) -> None:
    vector = await local.embed("Deploys go through the release branch, never main")
    assert len(vector) == MODEL_DIM == 384
    assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-5)


async def test_a_paraphrase_scores_above_unrelated_text(local: LocalEmbedder) -> None:
    memory, question, unrelated = await local.embed_many(
        [
            "The integration tests need a running PostgreSQL; start it with docker compose up db.",
            "What do I have to start before running the integration tests?",
            "Our office plants are watered every Tuesday by the facilities team.",
        ]
    )
    assert cos(memory, question) > cos(unrelated, question) + 0.2


async def test_the_same_text_gives_the_same_vector(local: LocalEmbedder) -> None:
    text = "Use pnpm, not npm, because the lockfile is pnpm-lock.yaml"
    assert await local.embed(text) == await local.embed(text)


async def test_a_batch_matches_one_at_a_time(local: LocalEmbedder) -> None:
    # Different lengths: a padded batch, or one int8 scale over the whole batch, would move them.
    texts = [
        "ok",
        "The cache key includes the tenant id",
        "Staging uses the eu-central-1 bucket; production uses ap-northeast-2 and a separate "
        "KMS key that only the deploy role can use, which is why local runs cannot read it.",
    ]
    batched = await local.embed_many(texts)
    for text, vector in zip(texts, batched, strict=True):
        assert await local.embed(text) == vector


async def test_concurrent_calls_are_coalesced_into_one_batch(local: LocalEmbedder) -> None:
    texts = [f"memory number {i} about the build pipeline" for i in range(16)]
    before = local.batches_run
    # The first call finds the model idle and goes alone; the 15 arriving while it runs share
    # the next batch.
    vectors = await asyncio.gather(*(local.embed(text) for text in texts))
    assert len(vectors) == 16
    assert local.batches_run - before == 2
    assert vectors[3] == await local.embed(texts[3])


async def test_text_past_256_tokens_is_truncated(local: LocalEmbedder) -> None:
    long_text = " ".join(f"word{i}" for i in range(400))  # well over 256 WordPiece tokens
    assert await local.embed(long_text) == await local.embed(long_text + " and a different ending")
    short = "word1 word2 word3"
    assert await local.embed(short) != await local.embed(short + " and a different ending")


async def test_a_wrong_dimension_is_refused_at_boot_naming_both_numbers() -> None:
    with pytest.raises(ConfigError, match=r"EMBEDDING_DIM is 1024 .* produces 384-dimension"):
        await LocalEmbedder.open(dim=1024)


async def test_a_different_model_is_refused_at_boot() -> None:
    with pytest.raises(ConfigError, match=f"runs {MODEL_NAME} only.*'bge-small'"):
        await LocalEmbedder.open(model="bge-small")


async def test_factory_refuses_an_explicit_dim_that_is_not_384() -> None:
    config = load_config({"EMBEDDING_PROVIDER": "local", "EMBEDDING_DIM": "768"}, local=True)
    with pytest.raises(ConfigError, match="EMBEDDING_DIM is 768"):
        async with open_embedder(config):
            pass


async def test_factory_opens_a_warm_model_and_closes_it() -> None:
    config = load_config({}, local=True)
    async with open_embedder(config) as embedder:
        assert isinstance(embedder, LocalEmbedder)
        assert embedder.batches_run == 1, "the warm-up ran at open"
        assert len(await embedder.embed("hello")) == 384
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed("after close")
