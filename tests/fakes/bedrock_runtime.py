"""A bedrock-runtime InvokeModel server for Titan Text Embeddings v2, over real HTTP.

aiobotocore is pointed at it with ``endpoint_url``, so botocore's real SigV4 signing, REST-JSON
serialisation and error parsing all run. It answers ``POST /model/{modelId}/invoke`` the way
Bedrock does for ``amazon.titan-embed-text-v2:0``: ``{"embedding": [...], "inputTextTokenCount":
n}``, errors as a status with ``x-amzn-ErrorType`` and ``{"message": ...}``. Unsigned requests get
403, and ``dimensions`` outside Titan's 256 / 512 / 1024 get 400, as they would from AWS.

    async with running_bedrock_runtime() as fake:
        config = load_config({..., "AWS_ENDPOINT_URL": fake.base_url})
        fake.knobs.failure = Failure(500, "InternalServerException", "boom")
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from aiohttp import web

from tests.fakes._server import Failure, FakeService
from tests.fakes._vectors import text_vector, words

TITAN_V2: Final = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS: Final = (256, 512, 1024)


class FakeBedrockRuntime(FakeService):
    """The server plus what tests inspect: ``knobs``, ``requests`` and ``base_url``."""

    def __init__(self) -> None:
        app = web.Application()
        app.router.add_post("/model/{model_id}/invoke", self._invoke)
        super().__init__(app)

    async def _invoke(self, request: web.Request) -> web.Response:
        model_id = request.match_info["model_id"]
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        refusal = await self.admit_signed(request, body)
        if refusal is not None:
            return _error(refusal.status, refusal.code, refusal.message)
        if model_id != TITAN_V2:
            return _error(400, "ValidationException", "The provided model identifier is invalid.")
        problem = _validate(body)
        if problem is not None:
            return _error(400, "ValidationException", problem)
        assert isinstance(body, dict)
        if self.knobs.no_embedding:
            return web.json_response({})
        vector = text_vector(body["inputText"], body.get("dimensions", 1024))
        return web.json_response(
            {
                "embedding": self.knobs.shape(vector),
                "inputTextTokenCount": len(words(body["inputText"])),
            },
            headers={"x-amzn-RequestId": f"fake-{len(self.requests)}"},
        )


def _validate(body: object) -> str | None:
    if not isinstance(body, dict):
        return "Malformed input request, please reformat your input and try again."
    text = body.get("inputText")
    if not isinstance(text, str) or not text:
        return "Malformed input request: #: required key [inputText] not found"
    if body.get("dimensions", 1024) not in TITAN_DIMENSIONS:
        return "Malformed input request: #/dimensions: must be one of 256, 512, 1024"
    if not isinstance(body.get("normalize", True), bool):
        return "Malformed input request: #/normalize: expected type: Boolean"
    return None


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response(
        {"message": message},
        status=status,
        headers={
            "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"
        },
    )


@asynccontextmanager
async def running_bedrock_runtime() -> AsyncIterator[FakeBedrockRuntime]:
    """A started fake for the length of the block."""
    fake = FakeBedrockRuntime()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


__all__ = ["TITAN_V2", "Failure", "FakeBedrockRuntime", "running_bedrock_runtime"]
