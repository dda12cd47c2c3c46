"""Answers sized for a model's context, end to end through the official MCP client on both
backends: remember and list_memories never hand a long body back, recall shows a long memory
as the passage that matched (holding the identifier it matched by), and memory_get returns one
memory whole under the visibility recall has."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from tests.api.conftest import Mode, mcp_session
from tests.api.test_tools_e2e import (  # noqa: F401  (fixtures, registered by import)
    MODES,
    TENANT,
    _tenant_per_test,
    call,
    ids_in,
    text_of,
)
from tests.api.test_tools_e2e import memory_url as memory_url  # the module's server fixture

PARAGRAPH = (
    "During the checkout incident the edge proxies queued requests while the payment gateway "
    "retried its upstream calls, so latency grew in every region before the alerts fired. "
)
IDENTIFIER = "NGINX_PROXY_TIMEOUT_Q2000"
POSTMORTEM = (
    "Postmortem of the checkout outage. "
    + PARAGRAPH * 175
    + f"The fix: raise {IDENTIFIER} to 75 seconds on the edge tier and redeploy."
)
FACTS = [
    "The API listens on port 8443 in staging.",
    "Deploys run from the release branch every Tuesday.",
    "Use pnpm, not npm, for the web app.",
    "The proxy timeout on internal services is 30 seconds.",
]


async def remember(url: str, content: str, **arguments: object) -> str:
    result = await call(url, "remember", {"content": content, **arguments})
    assert not result.is_error, text_of(result)
    return text_of(result)


async def test_remember_of_30_kb_answers_briefly_with_a_preview_and_the_length(
    memory_url: str,
) -> None:
    assert 28_000 < len(POSTMORTEM.encode()) < 32_000
    text = await remember(memory_url, POSTMORTEM)
    assert len(text) <= 1_000, len(text)
    assert f"{len(POSTMORTEM):,} characters" in text
    assert POSTMORTEM[:80] in text and IDENTIFIER not in text  # a preview, not the body


async def test_list_of_five_with_a_30_kb_memory_stays_small(memory_url: str) -> None:
    for fact in FACTS:
        await remember(memory_url, fact)
    await remember(memory_url, POSTMORTEM, expires_in_days=30)
    text = text_of(await call(memory_url, "list_memories", {"limit": 5}))
    assert len(ids_in(text)) == 5
    assert len(text) <= 4_000, len(text)
    assert f"{len(POSTMORTEM):,} characters" in text and "expires " in text


async def test_recall_of_a_30_kb_memory_returns_the_passage_holding_the_identifier(
    memory_url: str,
) -> None:
    for fact in FACTS:
        await remember(memory_url, fact)
    stored = ids_in(await remember(memory_url, POSTMORTEM))[0]
    text = text_of(await call(memory_url, "recall", {"query": IDENTIFIER}))
    assert ids_in(text)[0] == stored, text[:500]
    assert len(text) <= 4_000, len(text)
    assert IDENTIFIER in text and "[excerpt, characters" in text
    assert f"of {len(POSTMORTEM):,}" in text
    # A short memory comes back whole.
    short = text_of(await call(memory_url, "recall", {"query": "which port does staging use?"}))
    assert FACTS[0] in short and "[excerpt" not in short
    # Each result carries its own confidence; the header states the best of them.
    labels = re.findall(r"\[id:\w+\] \([^)]*?(high|medium|low) confidence", short)
    assert len(labels) == len(ids_in(short)) >= 1, short
    best = "HIGH" if "high" in labels else "MEDIUM" if "medium" in labels else "LOW"
    assert f"{best} CONFIDENCE:" in short


async def test_memory_get_returns_the_whole_memory(memory_url: str) -> None:
    stored = ids_in(await remember(memory_url, POSTMORTEM))[0]
    text = text_of(await call(memory_url, "memory_get", {"id": stored}))
    assert POSTMORTEM in text and stored in text


async def test_memory_get_answers_another_tenant_or_conversation_as_a_random_id(
    memory_url: str,
) -> None:
    in_chat = {**TENANT, "X-Conversation-Id": "chat:1"}
    note = ids_in(await remember_with(memory_url, in_chat, "In this thread answer in French."))[0]
    project = ids_in(await remember(memory_url, "The build uses Bazel 7."))[0]
    random_id = "01JD0000000000000000000000"
    unknown = text_of(await call(memory_url, "memory_get", {"id": random_id}))
    assert "No memory with id" in unknown
    other_chat = {**TENANT, "X-Conversation-Id": "chat:2"}
    other_tenant = {"X-Memory-Tenant": TENANT["X-Memory-Tenant"] + "-other"}
    for headers, memory_id in ((other_chat, note), (TENANT, note), (other_tenant, project)):
        text = text_of(await call(memory_url, "memory_get", {"id": memory_id}, headers=headers))
        assert text == unknown.replace(random_id, memory_id), text
    assert "French" in text_of(await call(memory_url, "memory_get", {"id": note}, headers=in_chat))


async def test_memory_get_shows_a_replaced_version_with_what_replaced_it(memory_url: str) -> None:
    old = ids_in(await remember(memory_url, "The staging API listens on port 8080."))[0]
    new = ids_in(await remember(memory_url, "The staging API listens on port 8443.", replaces=old))[
        0
    ]
    text = text_of(await call(memory_url, "memory_get", {"id": old}))
    assert "port 8080" in text and f"replaced by {new}" in text


@pytest.mark.parametrize("bad", ["", "not an id", 42])
async def test_memory_get_refuses_a_malformed_id_by_name(memory_url: str, bad: object) -> None:
    result = await call(memory_url, "memory_get", {"id": bad})
    assert result.is_error and "`id`" in text_of(result), text_of(result)


async def remember_with(url: str, headers: dict[str, str], content: str) -> str:
    result = await call(
        url, "remember", {"content": content, "scope": "conversation"}, headers=headers
    )
    assert not result.is_error, text_of(result)
    return text_of(result)


async def test_a_budget_keeps_the_answer_small_and_the_top_id(memory_url: str) -> None:
    for fact in FACTS:
        await remember(memory_url, fact)
    stored = ids_in(await remember(memory_url, POSTMORTEM))[0]
    text = text_of(await call(memory_url, "recall", {"query": IDENTIFIER, "max_tokens": 300}))
    assert len(text) <= 1_500, len(text)
    assert ids_in(text)[0] == stored
    wide = text_of(
        await call(
            memory_url,
            "recall",
            {"query": "proxy timeout", "mode": "exploratory", "max_tokens": 120},
        )
    )
    assert "left out to fit max_tokens=120" in wide, wide


async def test_a_huge_budget_is_clamped_not_refused(memory_url: str) -> None:
    await remember(memory_url, FACTS[0])
    result = await call(memory_url, "recall", {"query": "staging port", "max_tokens": 10**9})
    assert not result.is_error and FACTS[0] in text_of(result)


@pytest.mark.parametrize("bad", [0, -5, 2.5, "300", True])
async def test_a_budget_below_1_or_not_an_integer_is_refused_by_name(
    memory_url: str, bad: object
) -> None:
    result = await call(memory_url, "recall", {"query": "anything", "max_tokens": bad})
    assert result.is_error, text_of(result)
    assert "`max_tokens` must be an integer of at least 1" in text_of(result)


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_declares_an_output_schema_and_answers_with_structured_content(
    memory_url: str, mode: Mode
) -> None:
    """On both protocol eras: the client validates each answer against the declared schema on
    its own; this also validates explicitly and reads the facts a client would parse."""
    async with mcp_session(memory_url, headers=TENANT, mode=mode) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        assert all(schemas.values()), schemas

        async def data(tool: str, arguments: dict[str, object]) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            structured = result.structured_content
            assert not result.is_error and structured is not None, result
            jsonschema.validate(structured, schemas[tool])
            return dict(structured)

        stored = await data("remember", {"content": POSTMORTEM, "expires_in_days": 3})
        assert stored["stored"] is True and stored["length"] == len(POSTMORTEM)
        assert stored["expires_at"] and len(str(stored["preview"])) <= 250
        old = await data("remember", {"content": FACTS[0]})
        new = await data(
            "remember", {"content": "The API listens on port 9443.", "replaces": old["id"]}
        )
        assert new["replaced"] == old["id"]

        found = await data("recall", {"query": IDENTIFIER})
        first = found["results"][0]
        assert first["id"] == stored["id"] and first["excerpt"] is not None
        assert IDENTIFIER in first["text"] and found["confidence"] in {"high", "medium", "low"}

        listed = await data("list_memories", {"limit": 5})
        assert listed["memories"][0]["id"] == new["id"]
        stats = await data("memory_stats", {})
        assert stats["total"] == 2 and stats["lower_bound"] is False
        history = await data("memory_history", {"id": old["id"]})
        statuses = {v["id"]: v["status"] for v in history["versions"]}
        assert statuses == {new["id"]: "current", old["id"]: "replaced"}
        whole = await data("memory_get", {"id": stored["id"]})
        assert whole["found"] is True and whole["text"] == POSTMORTEM
        missing = await data("memory_get", {"id": "01JD0000000000000000000000"})
        assert missing["found"] is False and missing["memory"] is None
        gone = await data("forget", {"id": old["id"]})
        assert gone["deleted"] == 1
