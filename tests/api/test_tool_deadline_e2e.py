"""The whole tool call's deadline (``TOOL_TIMEOUT_S``): what no storage deadline covers, a hung
embedder here, is cut at it and answered as a tool error, counted under stage ``tool``. The
real runtime on PostgreSQL, the OpenAI-compatible embedding fake told to hang, and the official
MCP client."""

from __future__ import annotations

import re
import time

import httpx2
import mcp_types as types

from services.api.runtime import open_runtime
from shared.config import load_config
from tests.api.conftest import McpServerFactory, mcp_session
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings

TOOL_TIMEOUT_S = 1.0
# Shorter than the tool's: a storage deadline that wrongly counted the embedder's time would
# fire first and blame PostgreSQL.
STORAGE_TIMEOUT_S = 0.5


async def timeouts(metrics_url: str, tool: str, stage: str) -> float:
    async with httpx2.AsyncClient() as http:
        text = (await http.get(metrics_url)).text
    name = f'mcp_memory_tool_timeouts_total{{stage="{stage}",tool="{tool}"}}'
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def test_a_call_outliving_the_tool_deadline_is_a_clear_error_counted_as_tool(
    mcp_server_factory: McpServerFactory,
    pg_url: str,
    openai_embeddings: FakeOpenAIEmbeddings,
) -> None:
    config = load_config(
        {
            "DATABASE_URL": pg_url,
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_BASE_URL": openai_embeddings.base_url,
            "EMBEDDING_API_KEY": openai_embeddings.api_key,
            "TOOL_TIMEOUT_S": str(TOOL_TIMEOUT_S),
            "STORAGE_TIMEOUT_S": str(STORAGE_TIMEOUT_S),
        }
    )
    url = await mcp_server_factory(runtime_factory=open_runtime, config=config)
    metrics_url = url.removesuffix("/mcp") + "/metrics"
    before = await timeouts(metrics_url, "recall", "tool")
    blamed_before = await timeouts(metrics_url, "recall", "vector_query")
    openai_embeddings.knobs.delay_s = 30.0

    started = time.monotonic()
    async with mcp_session(url, headers={"X-Memory-Tenant": "acme"}) as client:
        result = await client.call_tool("recall", {"query": "Which port does the API use?"})
    elapsed = time.monotonic() - started

    (content,) = result.content
    assert isinstance(content, types.TextContent)
    assert result.is_error, content.text
    assert content.text == (
        "Error: the memory store could not complete this request — the request did not finish "
        "within 1 s; try again in a minute"
    )
    assert elapsed < TOOL_TIMEOUT_S + 2
    assert await timeouts(metrics_url, "recall", "tool") == before + 1
    assert await timeouts(metrics_url, "recall", "vector_query") == blamed_before

    openai_embeddings.knobs.delay_s = 0.0
    async with mcp_session(url, headers={"X-Memory-Tenant": "acme"}) as client:
        recovered = await client.call_tool("recall", {"query": "Which port does the API use?"})
    assert not recovered.is_error
