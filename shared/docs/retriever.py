"""search_docs' backend: a Bedrock Knowledge Base queried over the Agent Runtime Retrieve API.

The library is shared across tenants and embeds the query with its own model, so nothing here
knows about tenants or EMBEDDING_*. aiobotocore is imported when the retriever is opened, which
only happens when KNOWLEDGE_BASE_ID is set.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any, Final, Self

import msgspec

from shared.config import Config
from shared.errors import DocsError

_RETRY_ATTEMPTS: Final = 3
_CONNECT_TIMEOUT_S: Final = 5.0
_READ_TIMEOUT_S: Final = 30.0


class DocExcerpt(msgspec.Struct, frozen=True, kw_only=True):
    """One retrieved chunk: its text, the document it came from, and the KB's relevance score."""

    excerpt: str
    source: str | None = None
    score: float | None = None


def _text(result: dict[str, Any]) -> str | None:
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def _source(result: dict[str, Any]) -> str | None:
    location = result.get("location")
    s3 = location.get("s3Location") if isinstance(location, dict) else None
    uri = s3.get("uri") if isinstance(s3, dict) else None
    return uri if isinstance(uri, str) and uri else None


def _score(result: dict[str, Any]) -> float | None:
    score = result.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score):
        return float(score)
    return None


def parse_retrieval(response: dict[str, Any]) -> list[DocExcerpt]:
    """The excerpts of a Retrieve response; results without usable text are skipped.

    Raises:
        DocsError: the response carries no list of retrieval results.
    """
    results = response.get("retrievalResults")
    if not isinstance(results, list):
        raise DocsError("the knowledge base response had no retrieval results in it")
    excerpts: list[DocExcerpt] = []
    for result in results:
        text = _text(result) if isinstance(result, dict) else None
        if text is not None:
            excerpts.append(DocExcerpt(excerpt=text, source=_source(result), score=_score(result)))
    return excerpts


class KnowledgeBaseRetriever:
    """Retrieve from ``config.aws.knowledge_base_id``; use as ``async with`` to own the client."""

    def __init__(self, config: Config) -> None:
        if not config.aws.knowledge_base_id:
            raise DocsError("no knowledge base is configured (KNOWLEDGE_BASE_ID is unset)")
        self._config = config
        self._knowledge_base_id = config.aws.knowledge_base_id
        self._stack = contextlib.AsyncExitStack()
        self._client: Any = None

    async def __aenter__(self) -> Self:
        from aiobotocore.config import AioConfig
        from aiobotocore.session import get_session

        options: dict[str, Any] = {
            "region_name": self._config.aws.region,
            "config": AioConfig(
                retries={"max_attempts": _RETRY_ATTEMPTS, "mode": "standard"},
                connect_timeout=_CONNECT_TIMEOUT_S,
                read_timeout=_READ_TIMEOUT_S,
            ),
        }
        if self._config.aws.endpoint_url:
            options["endpoint_url"] = self._config.aws.endpoint_url
        self._client = await self._stack.enter_async_context(
            get_session().create_client("bedrock-agent-runtime", **options)
        )
        return self

    async def __aexit__(self, *_: object) -> None:
        self._client = None
        await self._stack.aclose()

    async def retrieve(self, query: str, *, limit: int) -> list[DocExcerpt]:
        """The knowledge base's nearest ``limit`` excerpts for ``query`` (not ordered by us).

        Raises:
            DocsError: the call failed (the cause is appended) or the response was unusable.
        """
        if self._client is None:
            raise DocsError("the knowledge base retriever is not open")
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = await self._client.retrieve(
                knowledgeBaseId=self._knowledge_base_id,
                retrievalQuery={"text": query},
                retrievalConfiguration={"vectorSearchConfiguration": {"numberOfResults": limit}},
            )
        except (ClientError, BotoCoreError) as error:
            raise DocsError(f"the knowledge base could not be searched — {error}") from error
        return parse_retrieval(response)


@contextlib.asynccontextmanager
async def open_retriever(config: Config) -> AsyncIterator[KnowledgeBaseRetriever | None]:
    """The opened retriever when KNOWLEDGE_BASE_ID is set, else None (and no SDK is loaded)."""
    if not config.aws.knowledge_base_id:
        yield None
        return
    async with KnowledgeBaseRetriever(config) as retriever:
        yield retriever
