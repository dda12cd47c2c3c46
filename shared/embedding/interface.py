"""The embedder interface and the checks every returned vector must pass."""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from shared.errors import EmbeddingError


@dataclasses.dataclass(frozen=True)
class RelationLines:
    """Cosines between relations (short facts and questions with their names and figures
    masked, ``shared.ranking.relations``), measured for one model (docs/calibration.md, "Two
    facts that share only a name"). ``same``: from which two facts tell the same relation.
    ``answers``: from which a fact tells the relation a question asks, and ``margin``: how much
    less than another fact of the same name it may read and still tell it as well."""

    same: float
    answers: float
    margin: float


class Embedder(abc.ABC):
    """Turns text into one vector of ``dim`` floats. ``relation_lines``: see ``RelationLines``;
    None where they are not measured, and two facts that share only a name are ordered by their
    words alone."""

    model: str
    dim: int
    relation_lines: RelationLines | None = None

    @abc.abstractmethod
    async def embed(self, text: str) -> list[float]:
        """One text's vector, already validated (see :func:`validated_vector`).

        Raises:
            EmbeddingError: the provider failed or returned something unusable.
        """

    async def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for several texts, in order. Providers that batch natively override this."""
        return [await self.embed(text) for text in texts]

    async def close(self) -> None:  # noqa: B027 - optional hook, most embedders hold nothing
        """Release what the embedder holds (HTTP sessions, clients)."""


def validated_vector(raw: Any, *, model: str, dim: int) -> list[float]:
    """Check a provider's answer is a usable embedding: numbers, the index's width, not all zero."""
    if not isinstance(raw, list) or not raw:
        raise EmbeddingError(f"the embedding response from {model} had no embedding in it")
    # Plain floats are what JSON decoders and numpy's tolist() give. Checking them as one type
    # and one array is several times faster than element by element.
    if set(map(type, raw)) == {float}:
        vector: list[float] = list(raw)
    elif all(isinstance(x, int | float) and not isinstance(x, bool) for x in raw):
        vector = [float(x) for x in raw]
    else:
        raise EmbeddingError(
            f"the embedding response from {model} had no embedding in it (non-numeric values)"
        )
    if len(vector) != dim:
        raise EmbeddingError(
            f"{model} returned a {len(vector)}-dimension embedding but EMBEDDING_DIM is {dim}; "
            "the index width cannot be changed after it is created, so set EMBEDDING_DIM and "
            "EMBEDDING_MODEL to match it, or create a new index"
        )
    values = np.asarray(vector, dtype=np.float64)
    if not np.isfinite(values).all():
        raise EmbeddingError(f"{model} returned an embedding with non-finite values")
    if not values.any():
        raise EmbeddingError(f"{model} returned an all-zero embedding, which has no direction")
    return vector
