"""A Bedrock Agent Runtime ``Retrieve`` server over a small document library, over real HTTP.

aiobotocore reaches it through ``endpoint_url`` (or ``AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME``),
so botocore's real SigV4 signing, rest-json serialisation and error parsing all run. It answers
``POST /knowledgebases/{knowledgeBaseId}/retrieve`` as a vector knowledge base does: the
``numberOfResults`` nearest chunks (default 5, at most 100), each with ``content.text``,
``location.s3Location.uri`` and a ``score`` in [0, 1]. Similarity is the teammates' hashed-word
cosine (tests/fakes/_vectors.py), so shared words rank higher.

Knobs: ``knobs.failure`` / ``fail_times`` / ``delay_s`` (shared with the other fakes),
``long_excerpt_chars`` (pad every excerpt to that many characters), ``omit_results`` (answer
without ``retrievalResults``), ``raw_results`` (answer exactly these results), and ``documents``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web

from tests.fakes._server import Failure, FakeService
from tests.fakes._vectors import cosine, text_vector

KNOWLEDGE_BASE_ID: Final = "KBTEST0001"
MAX_QUERY_CHARS: Final = 1000
MAX_RESULTS: Final = 100
DEFAULT_RESULTS: Final = 5
_DIM: Final = 256


@dataclass(frozen=True)
class Document:
    uri: str
    text: str


LIBRARY: Final = (
    Document(
        uri="s3://docs-bucket/runbooks/deploy.md",
        text="To deploy the api service run make deploy from the release branch after CI passes.",
    ),
    Document(
        uri="s3://docs-bucket/runbooks/rollback.md",
        text="Roll back a bad deploy with make rollback; it restores the previous image tag.",
    ),
    Document(
        uri="s3://docs-bucket/guides/postgres.md",
        text="The PostgreSQL backend needs the pgvector extension created once by a superuser.",
    ),
    Document(
        uri="s3://docs-bucket/guides/tenancy.md",
        text="Every request carries a tenant header; memories never cross tenants.",
    ),
)


class FakeBedrockAgentRuntime(FakeService):
    """The server plus what tests inspect: ``knobs``, ``requests`` and ``base_url``."""

    def __init__(self) -> None:
        app = web.Application()
        app.router.add_post("/knowledgebases/{kb}/retrieve", self._retrieve)
        super().__init__(app)
        self.knowledge_base_id = KNOWLEDGE_BASE_ID
        self.documents: list[Document] = list(LIBRARY)
        self.long_excerpt_chars: int | None = None
        self.omit_results = False
        self.raw_results: list[dict[str, Any]] | None = None

    async def _retrieve(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        refusal = await self.admit_signed(request, body)
        if refusal is not None:
            return _error(refusal.status, refusal.code, refusal.message)
        if request.match_info["kb"] != self.knowledge_base_id:
            return _error(404, "ResourceNotFoundException", "Knowledge base not found")
        problem, query, count = _validate(body)
        if problem is not None:
            return _error(400, "ValidationException", problem)
        if self.omit_results:
            return web.json_response({})
        results = self.raw_results if self.raw_results is not None else self._nearest(query, count)
        return web.json_response({"retrievalResults": results})

    def _nearest(self, query: str, count: int) -> list[dict[str, Any]]:
        wanted = text_vector(query, _DIM)
        scored = sorted(
            ((cosine(wanted, text_vector(doc.text, _DIM)), doc) for doc in self.documents),
            key=lambda pair: pair[0],
            reverse=True,
        )
        results = []
        for similarity, doc in scored[:count]:
            text = doc.text
            if self.long_excerpt_chars is not None:
                text = (text + " ") * (self.long_excerpt_chars // (len(text) + 1) + 1)
                text = text[: self.long_excerpt_chars]
            results.append(
                {
                    "content": {"text": text, "type": "TEXT"},
                    "location": {"type": "S3", "s3Location": {"uri": doc.uri}},
                    "score": round((similarity + 1) / 2, 6),
                }
            )
        return results


def _validate(body: object) -> tuple[str | None, str, int]:
    if not isinstance(body, dict):
        return "Malformed request body", "", 0
    text = (body.get("retrievalQuery") or {}).get("text")
    if not isinstance(text, str) or not text:
        return "retrievalQuery.text is required", "", 0
    if len(text.encode("utf-16-le")) // 2 > MAX_QUERY_CHARS:
        return f"retrievalQuery.text must be at most {MAX_QUERY_CHARS} characters", "", 0
    vector_search = (body.get("retrievalConfiguration") or {}).get("vectorSearchConfiguration")
    count = (vector_search or {}).get("numberOfResults", DEFAULT_RESULTS)
    if not isinstance(count, int) or not 1 <= count <= MAX_RESULTS:
        return f"numberOfResults must be between 1 and {MAX_RESULTS}", "", 0
    return None, text, count


def _error(status: int, code: str, message: str) -> web.Response:
    return web.json_response(
        {"message": message}, status=status, headers={"x-amzn-ErrorType": code}
    )


@asynccontextmanager
async def running_bedrock_agent_runtime() -> AsyncIterator[FakeBedrockAgentRuntime]:
    """A started fake for the length of the block."""
    fake = FakeBedrockAgentRuntime()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


__all__ = [
    "KNOWLEDGE_BASE_ID",
    "LIBRARY",
    "Document",
    "Failure",
    "FakeBedrockAgentRuntime",
    "running_bedrock_agent_runtime",
]
