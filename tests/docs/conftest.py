"""The Retrieve fake and an opened retriever pointed at it over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared.config import Config, load_config
from shared.docs import KnowledgeBaseRetriever
from tests.fakes.bedrock_agent_runtime import (
    KNOWLEDGE_BASE_ID,
    FakeBedrockAgentRuntime,
    running_bedrock_agent_runtime,
)
from tests.fakes.fixtures import aws_test_credentials  # noqa: F401  (fixture, registered by import)


@pytest.fixture
async def agent_runtime(aws_test_credentials: None) -> AsyncIterator[FakeBedrockAgentRuntime]:  # noqa: F811
    async with running_bedrock_agent_runtime() as fake:
        yield fake


@pytest.fixture
def docs_config(agent_runtime: FakeBedrockAgentRuntime) -> Config:
    return load_config(
        {
            "DATABASE_URL": "postgres://unused",
            "KNOWLEDGE_BASE_ID": KNOWLEDGE_BASE_ID,
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": agent_runtime.base_url,
        }
    )


@pytest.fixture
async def retriever(docs_config: Config) -> AsyncIterator[KnowledgeBaseRetriever]:
    async with KnowledgeBaseRetriever(docs_config) as opened:
        yield opened
