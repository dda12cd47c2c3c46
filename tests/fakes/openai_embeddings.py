"""An OpenAI-compatible ``POST /v1/embeddings`` server over real HTTP.

Speaks the wire format of api.openai.com (and vLLM, Ollama, TEI): ``{model, input}`` in, where
input is a string or a list of strings, and ``{"object": "list", "data": [{"object": "embedding",
"index": i, "embedding": [...]}], "model", "usage"}`` out. A wrong bearer key gets 401 with
OpenAI's error body. Vectors are deterministic (``tests.fakes._vectors``).

    async with running_openai_embeddings(dim=1536, api_key="sk-test") as fake:
        config = load_config({..., "EMBEDDING_BASE_URL": fake.base_url, ...})
        fake.knobs.delay_s = 1.0   # slower than the embedder's timeout
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from aiohttp import web

from tests.fakes._server import Failure, FakeService, RecordedRequest
from tests.fakes._vectors import text_vector, words

DEFAULT_API_KEY: Final = "sk-test-fake"


class FakeOpenAIEmbeddings(FakeService):
    """The server plus what tests inspect: ``knobs``, ``requests`` and ``base_url`` (…/v1)."""

    def __init__(self, *, dim: int = 1536, api_key: str = DEFAULT_API_KEY) -> None:
        self.dim = dim
        self.api_key = api_key
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        super().__init__(app)

    @property
    def base_url(self) -> str:
        """What to set as EMBEDDING_BASE_URL."""
        return f"{self._server.origin}/v1"

    async def _embeddings(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        self.requests.append(RecordedRequest(request.path, dict(request.headers), body))
        await self._server.delay()
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "invalid_api_key", "Incorrect API key provided.")
        failure = self.knobs.take_failure()
        if failure is not None:
            return _error(failure.status, failure.code, failure.message)
        texts = _inputs(body)
        if texts is None:
            return _error(400, "invalid_request_error", "'input' must be a string or strings")
        if self.knobs.no_embedding:
            return web.json_response({"object": "list", "data": [], "model": body["model"]})
        dim = body.get("dimensions", self.dim)
        data = [
            {"object": "embedding", "index": i, "embedding": self.knobs.shape(text_vector(t, dim))}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(words(t)) for t in texts)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def _inputs(body: Any) -> list[str] | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return None
    value = body.get("input")
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return list(value)
    return None


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": code}},
        status=status,
    )


@asynccontextmanager
async def running_openai_embeddings(
    *, dim: int = 1536, api_key: str = DEFAULT_API_KEY
) -> AsyncIterator[FakeOpenAIEmbeddings]:
    """A started fake for the length of the block."""
    fake = FakeOpenAIEmbeddings(dim=dim, api_key=api_key)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


__all__ = ["DEFAULT_API_KEY", "Failure", "FakeOpenAIEmbeddings", "running_openai_embeddings"]
