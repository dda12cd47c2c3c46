"""Embedders: bedrock (default), openai-compatible, and a local in-process model; the one named
by EMBEDDING_PROVIDER is opened, importing only that provider's libraries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from shared.config import Config
from shared.embedding.interface import Embedder, RelationLines, validated_vector
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
        from shared.embedding.prepared_graph import cache_folder

        data_dir = config.postgres.data_dir
        embedder = await LocalEmbedder.open(
            model=config.embedding.model,
            dim=config.embedding.dim,
            # Under --local the data dir is this machine's own; elsewhere (a pod) nothing of
            # the model is written, and each start prepares the graph in memory.
            cache_folder=cache_folder(data_dir) if data_dir is not None else None,
        )
    try:
        yield embedder
    finally:
        await embedder.close()


__all__ = ["Embedder", "RelationLines", "open_embedder", "validated_vector"]
