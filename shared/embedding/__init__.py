"""Embedders: bedrock (default), openai-compatible, and a local in-process model; the one named
by EMBEDDING_PROVIDER is opened, importing only that provider's libraries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from shared.config import Config
from shared.embedding.interface import Embedder, validated_vector
from shared.errors import ConfigError


@asynccontextmanager
async def open_embedder(config: Config) -> AsyncIterator[Embedder]:
    """Open the configured embedder for the lifetime of the block, and close it after.

    The provider's module is imported inside its branch, so a PostgreSQL deployment using an
    OpenAI-compatible endpoint never loads aiobotocore, and nothing but ``local`` loads
    onnxruntime. The local model is loaded (and warmed up) here, so a broken install stops the
    boot instead of the first recall.

    Raises:
        ConfigError: the local model cannot serve EMBEDDING_MODEL / EMBEDDING_DIM.
        EmbeddingError: the local model could not be loaded.
    """
    embedder: Embedder
    if config.embedding.provider == "bedrock":
        from shared.embedding.bedrock import BedrockEmbedder

        embedder = await BedrockEmbedder.open(
            model=config.embedding.model,
            dim=config.embedding.dim,
            region=config.aws.region,
            endpoint_url=config.aws.endpoint_url,
        )
    elif config.embedding.provider == "openai":
        from shared.embedding.openai import OpenAIEmbedder

        # load_config guarantees both under openai; the check keeps a hand-built Config honest.
        if config.embedding.base_url is None or config.embedding.api_key is None:
            raise ConfigError(
                "EMBEDDING_BASE_URL and EMBEDDING_API_KEY are required when "
                "EMBEDDING_PROVIDER=openai"
            )
        embedder = OpenAIEmbedder(
            config.embedding.base_url,
            api_key=config.embedding.api_key,
            model=config.embedding.model,
            dim=config.embedding.dim,
        )
    else:
        from shared.embedding.local import LocalEmbedder

        embedder = await LocalEmbedder.open(model=config.embedding.model, dim=config.embedding.dim)
    try:
        yield embedder
    finally:
        await embedder.close()


__all__ = ["Embedder", "open_embedder", "validated_vector"]
