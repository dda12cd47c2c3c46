"""search_docs end to end against the Retrieve fake: arguments, rendering, truncation, errors."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from services.api.tools.catalogue import guarded
from services.api.tools.definition import ToolContext
from services.api.tools.refusals import parse_arguments
from services.api.tools.search_docs import (
    SEARCH_DOCS,
    SearchDocsArguments,
    handle,
    render,
)
from shared.config import Config, load_config
from shared.docs import DocExcerpt, KnowledgeBaseRetriever, open_retriever
from shared.errors import DocsError, InvalidInputError
from tests.fakes._server import Failure
from tests.fakes.bedrock_agent_runtime import FakeBedrockAgentRuntime

REPO_ROOT = Path(__file__).resolve().parents[2]


def validate(arguments: dict[str, Any]) -> SearchDocsArguments:
    return parse_arguments(SearchDocsArguments, arguments)


async def run(retriever: KnowledgeBaseRetriever, arguments: SearchDocsArguments) -> str:
    """The text the tool answers with (its handler, as the catalogue calls it)."""
    return (await handle(retriever, ToolContext(tenant="acme"), arguments)).text


NOTE = "… (truncated — read the source document for the rest)"


@pytest.mark.parametrize(
    "arguments",
    [{}, {"query": None}, {"query": ""}, {"query": "   "}, {"query": 42}, {"query": ["a"]}],
)
def test_query_is_required_and_non_blank(arguments: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError) as raised:
        validate(arguments)
    assert raised.value.field == "query"
    assert "required" in str(raised.value)


@pytest.mark.parametrize("query", ["x" * 1001, "😀" * 501, "a" + "😀" * 500])
def test_query_over_1000_characters_counted_in_utf16_is_refused(query: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        validate({"query": query})
    assert raised.value.field == "query"
    assert "1000 characters" in str(raised.value)


@pytest.mark.parametrize("query", ["x" * 1000, "😀" * 500, "  padded  " + "y" * 990])
def test_query_of_1000_characters_is_accepted(query: str) -> None:
    assert validate({"query": query}).query == query.strip()


@pytest.mark.parametrize("limit", [0, -1, 51, 1.5, "3", True, False, [5]])
def test_limit_outside_1_to_50_or_not_an_integer_is_refused(limit: object) -> None:
    with pytest.raises(InvalidInputError) as raised:
        validate({"query": "deploy", "limit": limit})
    assert raised.value.field == "limit"
    assert "between 1 and 50" in str(raised.value)


@pytest.mark.parametrize(
    ("arguments", "limit"),
    [({}, 5), ({"limit": None}, 5), ({"limit": 1.0}, 1), ({"limit": 50}, 50), ({"limit": 1}, 1)],
)
def test_limit_defaults_to_5_and_accepts_whole_numbers(
    arguments: dict[str, Any], limit: int
) -> None:
    assert validate({"query": "deploy", **arguments}) == SearchDocsArguments(
        query="deploy", limit=limit
    )


def test_schema_requires_query_and_states_the_limits() -> None:
    assert SEARCH_DOCS.name == "search_docs"
    assert SEARCH_DOCS.input_schema["required"] == ["query"]
    props = SEARCH_DOCS.input_schema["properties"]
    assert "1000 characters" in props["query"]["description"]
    assert "1-50, default 5" in props["limit"]["description"]


async def test_results_are_rendered_relative_to_the_top_with_sources(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    text = await run(retriever, validate({"query": "how do I deploy the api service", "limit": 2}))

    lines = text.split("\n")
    assert lines[0] == (
        '[DOCS] 2 excerpts matched "how do I deploy the api service" in the documentation library.'
    )
    assert lines[1] == ""
    assert lines[2] == "1. (100% of the top result, source: s3://docs-bucket/runbooks/deploy.md)"
    assert lines[3].startswith("   To deploy the api service run make deploy")
    assert lines[5].startswith("2. (") and "% of the top result, source: s3://" in lines[5]
    sent = agent_runtime.requests[-1].body
    assert sent["retrievalQuery"] == {"text": "how do I deploy the api service"}
    assert sent["retrievalConfiguration"] == {"vectorSearchConfiguration": {"numberOfResults": 2}}
    assert agent_runtime.requests[-1].path == "/knowledgebases/KBTEST0001/retrieve"


async def test_one_result_is_one_excerpt(retriever: KnowledgeBaseRetriever) -> None:
    text = await run(retriever, SearchDocsArguments(query="rollback", limit=1))
    assert text.startswith('[DOCS] 1 excerpt matched "rollback" in the documentation library.')


async def test_an_empty_library_says_nothing_close_is_indexed(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.documents = []
    text = await run(retriever, SearchDocsArguments(query="deploy"))
    assert text.startswith('[DOCS] Nothing in the documentation library matched "deploy".')
    assert "nothing close" in text and "not the same as" in text and "rephras" in text


async def test_a_long_excerpt_is_cut_at_2000_characters_with_a_pointer_to_the_source(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.long_excerpt_chars = 5000
    text = await run(retriever, SearchDocsArguments(query="deploy", limit=1))
    excerpt = text.split("\n")[3]
    assert excerpt.endswith(NOTE)
    assert len(excerpt) == 3 + 2000 + len(NOTE)


async def test_an_excerpt_of_exactly_2000_characters_is_whole(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.long_excerpt_chars = 2000
    text = await run(retriever, SearchDocsArguments(query="deploy", limit=1))
    assert NOTE not in text
    assert len(text.split("\n")[3]) == 3 + 2000


def test_the_cut_counts_utf16_units_and_never_splits_a_character() -> None:
    text = render("q", [DocExcerpt(excerpt="a" + "😀" * 1500)])
    excerpt = text.split("\n")[3][3:]
    assert excerpt == "a" + "😀" * 999 + NOTE  # 1 + 1998 units; the next emoji would be 2001


async def test_unusable_results_are_skipped_and_missing_facets_left_out(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.raw_results = [
        {"content": {"text": "   "}, "score": 0.9},
        {"content": {"type": "IMAGE"}, "score": 0.9},
        {"content": {"text": "scored, no location"}, "score": 0.8},
        {"content": {"text": "web page"}, "location": {"type": "WEB"}, "score": 0.5},
        {
            "content": {"text": "unscored"},
            "location": {"type": "S3", "s3Location": {"uri": "s3://b/u"}},
        },
    ]
    text = await run(retriever, SearchDocsArguments(query="anything"))
    assert text.split("\n")[0].startswith("[DOCS] 3 excerpts matched")
    assert "1. (100% of the top result)\n   scored, no location" in text
    assert "2. (63% of the top result)\n   web page" in text  # 62.5 rounds up, as JS did
    assert "3. (source: s3://b/u)\n   unscored" in text
    assert "0.8" not in text and "0.5" not in text


def test_a_top_score_of_zero_shows_no_standing() -> None:
    text = render("q", [DocExcerpt(excerpt="zero", score=0.0, source="s3://b/z")])
    assert "1. (source: s3://b/z)" in text and "%" not in text


async def test_a_failing_call_is_a_docs_error_with_the_cause(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.knobs.failure = Failure(403, "AccessDeniedException", "not allowed to Retrieve")
    with pytest.raises(DocsError) as raised:
        await run(retriever, SearchDocsArguments(query="deploy"))
    message = str(raised.value)
    assert message.startswith("the knowledge base could not be searched — ")
    assert "AccessDeniedException" in message


async def test_an_unknown_knowledge_base_is_a_docs_error(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.knowledge_base_id = "KBOTHER001"
    with pytest.raises(DocsError, match="ResourceNotFoundException"):
        await run(retriever, SearchDocsArguments(query="deploy"))


async def test_a_response_without_results_is_a_docs_error(
    retriever: KnowledgeBaseRetriever, agent_runtime: FakeBedrockAgentRuntime
) -> None:
    agent_runtime.omit_results = True
    with pytest.raises(DocsError, match="no retrieval results"):
        await run(retriever, SearchDocsArguments(query="deploy"))


async def test_an_unreachable_service_is_a_docs_error(aws_test_credentials: None) -> None:
    config = load_config(
        {
            "DATABASE_URL": "postgres://unused",
            "KNOWLEDGE_BASE_ID": "KBTEST0001",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        }
    )
    async with KnowledgeBaseRetriever(config) as retriever:
        with pytest.raises(DocsError, match="could not be searched"):
            await retriever.retrieve("deploy", limit=1)


async def test_without_a_knowledge_base_there_is_no_retriever() -> None:
    async with open_retriever(load_config({"DATABASE_URL": "postgres://unused"})) as retriever:
        assert retriever is None


async def test_open_retriever_opens_one_when_configured(docs_config: Config) -> None:
    async with open_retriever(docs_config) as retriever:
        assert retriever is not None
        assert len(await retriever.retrieve("tenant header", limit=3)) == 3


_IMPORTS = """
import json, sys
import shared.docs, services.api.tools.search_docs
print(json.dumps({m: m in sys.modules for m in ("aiobotocore", "botocore")}))
"""


async def test_importing_the_tool_and_the_retriever_loads_no_aws_sdk() -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _IMPORTS,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await child.communicate()
    assert child.returncode == 0, stderr.decode()
    assert json.loads(stdout) == {"aiobotocore": False, "botocore": False}


async def test_the_catalogue_handler_validates_then_searches(
    retriever: KnowledgeBaseRetriever,
) -> None:
    ctx = ToolContext(tenant="acme")
    handler = guarded(SEARCH_DOCS, retriever).handler
    refused = await handler(ctx, {"query": " "})
    assert refused.is_error and refused.text.startswith("Error: `query` is required")
    reply = await handler(ctx, {"query": "pgvector extension", "limit": 1})
    assert "source: s3://docs-bucket/guides/postgres.md" in reply.text
    assert reply.structured is not None
    [found] = reply.structured["excerpts"]
    assert found["source"] == "s3://docs-bucket/guides/postgres.md" and found["standing"] == 100
