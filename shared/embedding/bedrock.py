"""Amazon Titan Text Embeddings v2 through Bedrock InvokeModel (aiobotocore).

Credentials come from the standard chain only (the pod's role in a deployment); nothing here
reads or accepts a key. ``endpoint_url`` points the client at a VPC endpoint, or at a test server.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any, Final

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from shared.embedding.interface import Embedder, validated_vector
from shared.errors import EmbeddingError

# Standard-mode retries: one quick retry absorbs a throttle or a 5xx blip without stretching a
# recall past what an agent will wait for.
DEFAULT_MAX_ATTEMPTS: Final = 2
CONNECT_TIMEOUT_S: Final = 5.0
READ_TIMEOUT_S: Final = 10.0


class BedrockEmbedder(Embedder):
    """One bedrock-runtime client for the process, created by :meth:`open`, closed by ``close``."""

    def __init__(self, client: Any, stack: AsyncExitStack, *, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self._client = client
        self._stack = stack

    @classmethod
    async def open(
        cls,
        *,
        model: str,
        dim: int,
        region: str,
        endpoint_url: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> BedrockEmbedder:
        config = AioConfig(
            retries={"mode": "standard", "total_max_attempts": max_attempts},
            connect_timeout=CONNECT_TIMEOUT_S,
            read_timeout=READ_TIMEOUT_S,
        )
        stack = AsyncExitStack()
        client = await stack.enter_async_context(
            get_session().create_client(
                "bedrock-runtime", region_name=region, endpoint_url=endpoint_url, config=config
            )
        )
        return cls(client, stack, model=model, dim=dim)

    async def embed(self, text: str) -> list[float]:
        body = json.dumps({"inputText": text, "dimensions": self.dim, "normalize": True})
        try:
            response = await self._client.invoke_model(
                modelId=self.model,
                body=body.encode(),
                contentType="application/json",
                accept="application/json",
            )
            async with response["body"] as stream:
                raw = await stream.read()
            document: Any = json.loads(raw)
        except (ClientError, BotoCoreError, ValueError) as error:
            raise EmbeddingError(
                f"Bedrock could not embed the text with {self.model}: {error}"
            ) from error
        embedding = document.get("embedding") if isinstance(document, dict) else None
        return validated_vector(embedding, model=self.model, dim=self.dim)

    async def close(self) -> None:
        await self._stack.aclose()
