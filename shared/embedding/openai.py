"""An OpenAI-compatible embeddings endpoint: POST {base}/embeddings with a bearer key."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import aiohttp

from shared.embedding.interface import Embedder, validated_vector
from shared.errors import EmbeddingError

DEFAULT_TIMEOUT_S: Final = 10.0
BODY_EXCERPT_CHARS: Final = 200


class OpenAIEmbedder(Embedder):
    """Owns one aiohttp session (connection pooling across calls); ``close()`` releases it."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        model: str,
        dim: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.model = model
        self.dim = dim
        self._url = f"{base_url.rstrip('/')}/embeddings"
        self._timeout_s = timeout_s
        self._session = aiohttp.ClientSession(
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        )

    async def embed(self, text: str) -> list[float]:
        (vector,) = await self._post(text, expected=1)
        return vector

    async def embed_many(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return await self._post(list(texts), expected=len(texts))

    async def close(self) -> None:
        await self._session.close()

    async def _post(self, payload: str | list[str], *, expected: int) -> list[list[float]]:
        try:
            async with self._session.post(
                self._url, json={"model": self.model, "input": payload}
            ) as response:
                body = await response.text()
                status = response.status
        except TimeoutError as error:  # aiohttp's timeouts subclass it (asyncio's is it, 3.11+)
            raise EmbeddingError(
                f"the embedding service at {self._url} did not respond within "
                f"{round(self._timeout_s * 1000)}ms"
            ) from error
        except (aiohttp.ClientError, OSError) as error:
            raise EmbeddingError(
                f"the embedding service at {self._url} could not be reached: {error}"
            ) from error
        if not 200 <= status < 300:
            raise EmbeddingError(
                f"the embedding service at {self._url} answered HTTP {status}: "
                f"{body[:BODY_EXCERPT_CHARS]}"
            )
        return self._vectors(body, expected=expected)

    def _vectors(self, body: str, *, expected: int) -> list[list[float]]:
        try:
            document: Any = json.loads(body)
        except ValueError:
            document = None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list) or len(data) != expected:
            raise EmbeddingError(
                f"the embedding response from {self.model} had no embedding in it "
                f"(expected {expected} in data[]): {body[:BODY_EXCERPT_CHARS]}"
            )
        # OpenAI documents an index per item; order by it rather than trusting arrival order.
        if all(isinstance(item, dict) and isinstance(item.get("index"), int) for item in data):
            data = sorted(data, key=lambda item: item["index"])
        return [
            validated_vector(
                item.get("embedding") if isinstance(item, dict) else None,
                model=self.model,
                dim=self.dim,
            )
            for item in data
        ]
