"""The memory tools end to end: the official MCP client over real HTTP, in both eras, against
the real runtime (PostgreSQL in a fresh database, the local model, real counters)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Mapping

import httpx2
import jsonschema
import mcp_types as types
import pytest
from aiohttp import web

from services.api import tools
from services.api.http.app import build_app
from services.api.runtime import open_runtime
from shared.config import load_config
from shared.process.logs import JsonLineFormatter
from tests.api.conftest import McpServerFactory, Mode, mcp_session
from tests.conftest import run_admin, with_database
from tests.fakes.aws import create_s3_backend, point_aws_at, seed_s3_objects
from tests.fakes.openai_embeddings import FakeOpenAIEmbeddings

MODES: list[Mode] = ["auto", "legacy"]
PORT_FACT = "The API server listens on port 3000 inside the Kubernetes cluster."
MEMORY_TOOLS = [
    "recall",
    "remember",
    "list_memories",
    "forget",
    "memory_stats",
    "memory_history",
    "memory_get",
]


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


def ids_in(text: str) -> list[str]:
    return re.findall(r"\[id:([0-9A-Z]{26})\]", text)


@contextlib.asynccontextmanager
async def postgres_environ(pg_server_url: str) -> AsyncIterator[dict[str, str]]:
    name = f"tools_e2e_{hashlib.sha256(pg_server_url.encode()).hexdigest()[:6]}"
    run_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    run_admin(pg_server_url, f'CREATE DATABASE "{name}"')
    try:
        yield {"DATABASE_URL": with_database(pg_server_url, name)}
    finally:
        run_admin(pg_server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.asynccontextmanager
async def s3_environ(moto_url: str, vectors_url: str) -> AsyncIterator[dict[str, str]]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        point_aws_at(monkeypatch, s3_url=moto_url, s3vectors_url=vectors_url)
        # Per module that uses this server (another test module imports the fixture).
        suffix = uuid.uuid4().hex[:8]
        buckets = {"VECTOR_BUCKET": f"e2e-vectors-{suffix}", "STATE_BUCKET": f"e2e-state-{suffix}"}
        await create_s3_backend(
            s3_url=moto_url,
            s3vectors_url=vectors_url,
            vector_bucket=buckets["VECTOR_BUCKET"],
            state_bucket=buckets["STATE_BUCKET"],
            dimension=384,
        )
        yield {**buckets, "AWS_REGION": "us-east-1"}


# The environment of the module's current backend, for tests that seed the store directly.
STORAGE: dict[str, str] = {}


@pytest.fixture(scope="module", params=["postgres", "s3"])
async def memory_url(
    request: pytest.FixtureRequest,
    pg_server_url: str,
    moto_s3_url: str,
    s3vectors_server: tuple[object, str],
) -> AsyncIterator[str]:
    """One real server per backend for the module (opening the model per test would dominate
    the run); each test gets its own tenant instead of its own store."""
    environ = (
        postgres_environ(pg_server_url)
        if request.param == "postgres"
        else s3_environ(moto_s3_url, s3vectors_server[1])
    )
    async with environ as storage:
        STORAGE.clear()
        STORAGE.update(storage)
        # moto lists 10,000 keys (memory_stats' lower bound) slower than a deployment's 5 s
        # deadline on a loaded machine; the deadlines are what test_storage_outages_e2e tests.
        settings = {**storage, "EMBEDDING_PROVIDER": "local", "STORAGE_TIMEOUT_S": "15"}
        config = load_config(settings)
        app = build_app(config, open_runtime=open_runtime)
        runner = web.AppRunner(app, shutdown_timeout=5)
        await runner.setup()
        try:
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            yield f"http://127.0.0.1:{runner.addresses[0][1]}/mcp"
        finally:
            await runner.cleanup()


TENANT = {"X-Memory-Tenant": "acme"}


@pytest.fixture(autouse=True)
def _tenant_per_test(request: pytest.FixtureRequest) -> None:
    """A tenant of this test's own on the shared server (TENANT is rebound per test)."""
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]
    TENANT["X-Memory-Tenant"] = f"t-{digest}"


async def call(
    url: str,
    tool: str,
    arguments: Mapping[str, object],
    *,
    headers: dict[str, str] | None = None,
    mode: Mode = "auto",
) -> types.CallToolResult:
    async with mcp_session(url, headers=TENANT if headers is None else headers, mode=mode) as c:
        return await c.call_tool(tool, dict(arguments))


@pytest.mark.parametrize("mode", MODES)
async def test_catalogue_is_the_seven_memory_tools_without_a_knowledge_base(
    memory_url: str, mode: Mode
) -> None:
    async with mcp_session(memory_url, mode=mode) as client:  # no tenant: discovery needs none
        listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == MEMORY_TOOLS
    recall = listed.tools[0]
    assert "at the start of a task" in (recall.description or "")
    assert all("tenant" not in tool.input_schema.get("properties", {}) for tool in listed.tools)


async def test_search_docs_is_not_callable_without_a_knowledge_base(memory_url: str) -> None:
    result = await call(memory_url, "search_docs", {"query": "anything"})
    assert result.is_error
    assert 'unknown tool "search_docs"' in text_of(result)


@pytest.mark.parametrize("mode", MODES)
async def test_remember_then_recall_then_already_known(memory_url: str, mode: Mode) -> None:
    stored = await call(memory_url, "remember", {"content": PORT_FACT}, mode=mode)
    assert not stored.is_error, text_of(stored)
    assert text_of(stored).startswith("[MEMORY] Stored as ")
    [memory_id] = ids_in(text_of(stored))

    recalled = await call(
        memory_url, "recall", {"query": "Which port does the API listen on?"}, mode=mode
    )
    text = text_of(recalled)
    assert ids_in(text) == [memory_id]
    assert "CONFIDENCE:" in text and "100% of the top result" in text
    assert not re.search(r"0\.\d{3}", text), "no raw cosine reaches the model"

    again = await call(memory_url, "remember", {"content": PORT_FACT}, mode=mode)
    assert "nothing new was written" in text_of(again)
    assert ids_in(text_of(again)) == [memory_id]


async def test_empty_memory_answers_no_match_with_guidance(memory_url: str) -> None:
    result = await call(memory_url, "recall", {"query": "how do we deploy?", "mode": "precision"})
    text = text_of(result)
    assert not result.is_error
    assert text.startswith('[MEMORY] No memories stored for this project matched "how do we')
    assert "NO MATCH FOUND" in text and "do not infer an answer" in text
    assert "exploratory" in text


async def test_unrelated_question_reports_gated_memories(memory_url: str) -> None:
    await call(memory_url, "remember", {"content": PORT_FACT})
    text = text_of(
        await call(memory_url, "recall", {"query": "What is the CEO's favourite pizza?"})
    )
    assert "NO CONFIDENT MATCH: the 1 memory closest to the query was compared" in text
    assert "Do not present a guess as a remembered fact" in text


async def test_list_stats_forget_round_trip(memory_url: str) -> None:
    first = ids_in(text_of(await call(memory_url, "remember", {"content": PORT_FACT})))[0]
    second = ids_in(
        text_of(
            await call(
                memory_url,
                "remember",
                {
                    "content": "Use `make release` to cut a release tag.",
                    "type": "pattern",
                    "category": "release",
                    "tags": ["make", " release ", ""],
                },
            )
        )
    )[0]
    listed = text_of(await call(memory_url, "list_memories", {}))
    assert listed.startswith("[MEMORY] 2 memories, newest first.")
    assert ids_in(listed) == [second, first]
    assert "(pattern/release, stored " in listed and "tags: make, release" in listed
    only = text_of(await call(memory_url, "list_memories", {"type": "pattern", "limit": 1.0}))
    assert only.startswith("[MEMORY] 1 memory, newest first.") and ids_in(only) == [second]
    stats = text_of(await call(memory_url, "memory_stats", {}))
    assert stats == "[MEMORY] 2 memories for this project (project: 1, pattern: 1)."
    assert text_of(await call(memory_url, "forget", {"id": first})) == f"[MEMORY] Deleted {first}."
    gone = text_of(await call(memory_url, "forget", {"id": first}))
    assert "No memory with id" in gone and "Nothing was deleted" in gone
    assert "1 memory for this project (pattern: 1)" in text_of(
        await call(memory_url, "memory_stats", {})
    )


async def test_conversation_scope_over_http(memory_url: str) -> None:
    in_chat = {**TENANT, "X-Conversation-Id": "chat:42"}
    other_chat = {**TENANT, "X-Conversation-Id": "chat:43"}
    note = await call(
        memory_url,
        "remember",
        {"content": "This user wants answers in French.", "scope": "conversation"},
        headers=in_chat,
    )
    [note_id] = ids_in(text_of(note))
    assert "this conversation only" in text_of(note)
    query = {"query": "Which language should answers be in?", "mode": "exploratory"}
    assert note_id in ids_in(text_of(await call(memory_url, "recall", query, headers=in_chat)))
    for headers in (other_chat, TENANT):
        text = text_of(await call(memory_url, "recall", query, headers=headers))
        assert note_id not in text and "No memories stored" in text  # not even in a gated count
        assert "no memories yet" in text_of(
            await call(memory_url, "memory_stats", {}, headers=headers)
        )
        forget = await call(memory_url, "forget", {"id": note_id}, headers=headers)
        assert "No memory with id" in text_of(forget)
    assert "1 memory for this project" in text_of(
        await call(memory_url, "memory_stats", {}, headers=in_chat)
    )


async def test_conversation_scope_without_a_conversation_is_refused_by_name(
    memory_url: str,
) -> None:
    result = await call(memory_url, "remember", {"content": PORT_FACT, "scope": "conversation"})
    assert result.is_error and "X-Conversation-Id" in text_of(result)
    assert "no memories yet" in text_of(await call(memory_url, "memory_stats", {}))


async def test_a_mistyped_tenant_is_not_named_outside_local(memory_url: str) -> None:
    """In a cluster tenant names are never disclosed: a tenant differing only by case gets the
    plain empty answers (tests/api/test_mistyped_tenant_e2e.py has the --local hint)."""
    assert "Stored as" in text_of(await call(memory_url, "remember", {"content": PORT_FACT}))
    mistyped = {"X-Memory-Tenant": TENANT["X-Memory-Tenant"].upper()}
    recalled = text_of(await call(memory_url, "recall", {"query": "port"}, headers=mistyped))
    assert (
        recalled.splitlines()[0] == '[MEMORY] No memories stored for this project matched "port".'
    )
    for tool in ("list_memories", "memory_stats"):
        text = text_of(await call(memory_url, tool, {}, headers=mistyped))
        assert text == "[MEMORY] This project has no memories yet."


TOO_LONG_CONTENT = "é" * 16_001  # 16,001 characters but 32,002 UTF-8 bytes


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "expected"),
    [
        ("recall", {"query": ""}, "query", "non-empty string"),
        ("recall", {"query": "   "}, "query", "non-empty string"),
        ("recall", {"query": 42}, "query", "non-empty string"),
        ("recall", {}, "query", "non-empty string"),
        ("recall", {"query": "x", "limit": 0}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "limit": -1}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "limit": 51}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "limit": 1.5}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "limit": "3"}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "limit": True}, "limit", "between 1 and 50"),
        ("recall", {"query": "x", "mode": "fast"}, "mode", "precision, balanced or exploratory"),
        ("list_memories", {"limit": 0}, "limit", "between 1 and 50"),
        ("list_memories", {"type": "secret"}, "type", "project, pattern, reference or conv"),
        ("remember", {"content": ""}, "content", "non-empty string"),
        ("remember", {"content": TOO_LONG_CONTENT}, "content", "32000 bytes"),
        ("remember", {"content": "x", "type": "note"}, "type", "project, pattern, reference"),
        ("remember", {"content": "x", "scope": "global"}, "scope", "project or conversation"),
        ("remember", {"content": "x", "category": "c" * 129}, "category", "128 bytes"),
        ("remember", {"content": "x", "category": 7}, "category", "must be a string"),
        ("remember", {"content": "x", "tags": "a,b"}, "tags", "array of strings"),
        ("remember", {"content": "x", "tags": [str(i) for i in range(21)]}, "tags", "20 entries"),
        ("remember", {"content": "x", "tags": ["t" * 65]}, "tags", "64 bytes"),
        ("forget", {"id": " "}, "id", "must be a memory id"),
        ("memory_stats", {"tenant": "other"}, "tenant", "request headers"),
        # Characters no store can hold: refused by name before anything is sent.
        ("remember", {"content": "port\x008080"}, "content", "contains a NUL character"),
        ("remember", {"content": "x", "category": "a\x00b"}, "category", "NUL character"),
        ("remember", {"content": "x", "tags": ["ok", "b\x00d"]}, "tags", "NUL character"),
        ("recall", {"query": "where\x00"}, "query", "NUL character"),
        ("forget", {"id": "01ABC\x00"}, "id", "NUL character"),
    ],
)
async def test_every_argument_refusal_names_the_field_and_limit(
    memory_url: str, tool: str, arguments: dict[str, object], field: str, expected: str
) -> None:
    result = await call(memory_url, tool, arguments)
    text = text_of(result)
    assert result.is_error, text
    assert text.startswith("Error: ") and f"`{field}`" in text and expected in text, text
    assert "no memories yet" in text_of(await call(memory_url, "memory_stats", {}))


async def test_the_advertised_schemas_are_the_structs_and_refuse_what_the_server_refuses(
    memory_url: str,
) -> None:
    """The official client reads each tool's schema; a call past a bound that schema states is
    refused by the server with the same field and the same bound."""
    async with mcp_session(memory_url, headers=TENANT) as client:
        listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        assert listed == {tool.name: tool.input_schema for tool in tools.MEMORY_TOOLS}
        bound = listed["recall"]["properties"]["limit"]
        arguments = {"query": "Which port?", "limit": bound["maximum"] + 1}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(arguments, listed["recall"])
        result = await client.call_tool("recall", arguments)
    assert result.is_error
    assert text_of(result) == (
        f"Error: `limit` must be an integer between {bound['minimum']} and {bound['maximum']}"
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "remember",
            {"content": "half \ud800 pair"},
            "`content` contains a lone surrogate (U+D800)",
        ),
        ("remember", {"content": "x", "tags": ["\udfff"]}, "`tags` contains a lone surrogate"),
        ("recall", {"query": "\udc00?"}, "`query` contains a lone surrogate (U+DC00)"),
        (
            "forget",
            {"filter": {"tag": "t\ud800"}},
            "`filter.tag` contains a lone surrogate (U+D800)",
        ),
    ],
)
async def test_a_lone_surrogate_is_refused_by_name(
    memory_url: str, tool: str, arguments: dict[str, object], expected: str
) -> None:
    """The official client cannot even encode one, so this is a raw JSON-RPC request with the
    escape a hostile client can send (valid JSON, not valid Unicode)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )
    assert "\\ud" in body  # the surrogate travels as a JSON escape, as a hostile client sends it
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(
            memory_url,
            content=body,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **TENANT,
            },
        )
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True
    assert expected in result["content"][0]["text"]
    assert "no memories yet" in text_of(await call(memory_url, "memory_stats", {}))


async def test_fifty_concurrent_tenants_never_see_each_other(memory_url: str) -> None:
    async def one(n: int) -> tuple[str, str]:
        headers = {"X-Tenant-Id": f"{TENANT['X-Memory-Tenant']}-{n}"}
        async with mcp_session(memory_url, headers=headers) as client:
            stored = await client.call_tool(
                "remember", {"content": f"Tenant {n} deploys its service with tool number {n}."}
            )
            [memory_id] = ids_in(text_of(stored))
            recalled = await client.call_tool(
                "recall", {"query": "How does this tenant deploy its service?", "limit": 50}
            )
            return memory_id, text_of(recalled)

    answers = await asyncio.gather(*(one(n) for n in range(50)))
    assert len({memory_id for memory_id, _ in answers}) == 50
    for memory_id, recalled in answers:
        assert ids_in(recalled) == [memory_id]


async def test_embedding_failure_is_a_tool_error_not_a_crash(
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
        }
    )
    url = await mcp_server_factory(runtime_factory=open_runtime, config=config)
    openai_embeddings.knobs.width = 768
    for tool, arguments in (("remember", {"content": PORT_FACT}), ("recall", {"query": "port?"})):
        result = await call(url, tool, arguments)
        text = text_of(result)
        assert result.is_error
        assert text.startswith("Error: the memory store could not complete this request — ")
        assert "768" in text and "1536" in text


async def test_logs_carry_no_content_query_or_conversation(
    memory_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "zebra-pineapple-7731 is the staging password hint"
    query = "what is the quokka-marmalade hint"
    headers = {**TENANT, "X-Conversation-Id": "chat:conv-secret-99"}
    with caplog.at_level(logging.INFO):
        await call(
            memory_url, "remember", {"content": secret, "tags": ["tag-kiwi"]}, headers=headers
        )
        await call(memory_url, "recall", {"query": query}, headers=headers)
        await call(memory_url, "remember", {"content": "", "tags": ["tag-kiwi"]}, headers=headers)
    formatter = JsonLineFormatter()
    lines = [json.loads(formatter.format(record)) for record in caplog.records]
    calls = [line for line in lines if line["event"] == "tool_call"]
    assert [(c["tool"], c["ok"], c["inConversation"]) for c in calls] == [
        ("remember", True, True),
        ("recall", True, True),
        ("remember", False, True),
    ]
    tenant = TENANT["X-Memory-Tenant"]
    assert all(c["tenant"] == tenant and isinstance(c["ms"], int) for c in calls)
    dump = json.dumps(lines)
    for private in ("zebra", "quokka", "tag-kiwi", "conv-secret"):
        assert private not in dump


async def test_metrics_observe_tools_storage_and_embedding(memory_url: str) -> None:
    await call(memory_url, "remember", {"content": PORT_FACT})
    await call(memory_url, "recall", {"query": "Which port does the API listen on?"})
    async with httpx2.AsyncClient() as http:
        response = await http.get(memory_url.removesuffix("/mcp") + "/metrics")
    text = response.text
    for sample in (
        'mcp_memory_tool_calls_total{outcome="ok",tool="recall"}',
        'mcp_memory_tool_duration_seconds_count{tool="remember"}',
        'mcp_memory_embedding_duration_seconds_count{operation="embed"}',
        'mcp_memory_storage_duration_seconds_count{operation="vector_query"}',
        'mcp_memory_storage_duration_seconds_count{operation="object_put"}',
    ):
        assert re.search(rf"^{re.escape(sample)} [1-9]", text, re.MULTILINE), sample
    assert TENANT["X-Memory-Tenant"] not in text


async def test_metrics_show_how_recalls_use_the_scan_snapshots(memory_url: str) -> None:
    """PostgreSQL: the first recall of a tenant scans in SQL and starts a snapshot read; once
    it is in, recalls are answered from it, and /metrics says both. S3 has no snapshots."""
    metrics_url = memory_url.removesuffix("/mcp") + "/metrics"
    if "DATABASE_URL" not in STORAGE:
        async with httpx2.AsyncClient() as http:
            assert "mcp_memory_scan_snapshot" not in (await http.get(metrics_url)).text
        return

    async def sample(name: str) -> float:
        async with httpx2.AsyncClient() as http:
            text = (await http.get(metrics_url)).text
        found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
        assert found is not None, name
        return float(found.group(1))

    hit = 'mcp_memory_scan_snapshot_queries_total{outcome="hit"}'
    miss = 'mcp_memory_scan_snapshot_queries_total{outcome="miss"}'
    headers = {"X-Memory-Tenant": f"snapshots-{uuid.uuid4().hex[:8]}"}
    hits_before, misses_before = await sample(hit), await sample(miss)
    await call(memory_url, "remember", {"content": PORT_FACT}, headers=headers)
    assert await sample(miss) > misses_before  # remember's dedup query found no snapshot
    for _ in range(50):
        await call(memory_url, "recall", {"query": "Which port?"}, headers=headers)
        if await sample(hit) > hits_before:
            break
        await asyncio.sleep(0.1)
    assert await sample(hit) > hits_before
    assert await sample("mcp_memory_scan_snapshot_refreshes_total") >= 1
    assert await sample("mcp_memory_scan_snapshot_bytes") > 0


async def test_stats_past_ten_thousand_keys_is_a_lower_bound(memory_url: str) -> None:
    tenant = TENANT["X-Memory-Tenant"]
    keys = [f"index/{tenant}/{i:010d}#01JAAAAAAAAAAAAAAAAAAAAAAA#pattern" for i in range(10_001)]
    if "DATABASE_URL" in STORAGE:
        run_admin(
            STORAGE["DATABASE_URL"],
            "INSERT INTO objects (key, body, version) SELECT k, '', nextval('objects_version') "
            f"FROM unnest(ARRAY[{','.join(repr(k) for k in keys)}]) AS k",
        )
    else:
        seed_s3_objects(STORAGE["STATE_BUCKET"], keys)
    text = text_of(await call(memory_url, "memory_stats", {}))
    assert text.startswith("[MEMORY] At least 10000 memories for this project (pattern: 10000).")
    assert "stopped at 10000 keys" in text and "lower bound" in text
