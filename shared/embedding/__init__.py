"""Embedders: bedrock (default), openai-compatible, and a local in-process model."""

from shared.embedding.factory import open_embedder
from shared.embedding.interface import Embedder, validated_vector

__all__ = ["Embedder", "open_embedder", "validated_vector"]
