"""Tenant and conversation headers over real HTTP with the official client, in both eras.

Refusals come back as tool errors naming the header; the tool does not run (``echo`` would have
answered with JSON).
"""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from tests.api.conftest import Headers, Mode, mcp_session

MODES: list[Mode] = ["auto", "legacy"]


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def call_echo(url: str, headers: Headers, mode: Mode) -> types.CallToolResult:
    async with mcp_session(url, headers=headers, mode=mode) as client:
        return await client.call_tool("echo", {})


async def context_of(url: str, headers: Headers, mode: Mode) -> tuple[str, str | None]:
    result = await call_echo(url, headers, mode)
    assert result.is_error is False, text_of(result)
    answer = json.loads(text_of(result))
    return answer["tenant"], answer["conversation"]


async def refusal_of(url: str, headers: Headers, mode: Mode) -> str:
    result = await call_echo(url, headers, mode)
    assert result.is_error is True
    text = text_of(result)
    assert text.startswith("Error: ")
    return text.removeprefix("Error: ")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "tenant", ["agent-studio", "opspresso.mcp_memory", "a", "Project1", "x" * 128]
)
async def test_valid_tenants_reach_the_tool(mcp_url: str, mode: Mode, tenant: str) -> None:
    assert await context_of(mcp_url, {"X-Memory-Tenant": tenant}, mode) == (tenant, None)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "tenant", ["../other", "a/b", ".", "..", "a b", "-leading", ".hidden", "x" * 129]
)
async def test_invalid_tenants_are_refused_naming_the_header(
    mcp_url: str, mode: Mode, tenant: str
) -> None:
    message = await refusal_of(mcp_url, {"X-Memory-Tenant": tenant}, mode)
    assert message.startswith("X-Memory-Tenant ")
    stamped = await refusal_of(mcp_url, {"X-Tenant-Id": tenant}, mode)
    assert stamped.startswith("X-Tenant-Id ")


@pytest.mark.parametrize("mode", MODES)
async def test_a_tenant_sent_twice_is_refused(mcp_url: str, mode: Mode) -> None:
    headers = [("X-Memory-Tenant", "a"), ("X-Memory-Tenant", "b")]
    assert await refusal_of(mcp_url, headers, mode) == "X-Memory-Tenant was sent more than once"
    same = [("X-Tenant-Id", "a"), ("X-Tenant-Id", "a")]
    assert await refusal_of(mcp_url, same, mode) == "X-Tenant-Id was sent more than once"


@pytest.mark.parametrize("mode", MODES)
async def test_explicit_tenant_wins(mcp_url: str, mode: Mode) -> None:
    headers = {"X-Memory-Tenant": "explicit", "X-Tenant-Id": "stamped"}
    assert await context_of(mcp_url, headers, mode) == ("explicit", None)


@pytest.mark.parametrize("mode", MODES)
async def test_blank_explicit_tenant_falls_back_to_the_stamped_one(
    mcp_url: str, mode: Mode
) -> None:
    # An empty value: HTTP clients refuse edge whitespace (and parsers would strip it anyway).
    headers = {"X-Memory-Tenant": "", "X-Tenant-Id": "stamped"}
    assert await context_of(mcp_url, headers, mode) == ("stamped", None)


@pytest.mark.parametrize("mode", MODES)
async def test_no_tenant_is_refused_naming_x_memory_tenant(mcp_url: str, mode: Mode) -> None:
    message = await refusal_of(mcp_url, {}, mode)
    # The fix a Claude Code, Cursor or Desktop user can make: their client's headers block.
    assert message.startswith(
        'X-Memory-Tenant header is required — add "headers": {"X-Memory-Tenant": "<project>"} '
        "to this server's entry in your MCP client's configuration"
    )


@pytest.mark.parametrize("mode", MODES)
async def test_conversation_reaches_the_tool(mcp_url: str, mode: Mode) -> None:
    headers = {"X-Tenant-Id": "t", "X-Conversation-Id": "slack:C1:17.2"}
    assert await context_of(mcp_url, headers, mode) == ("t", "slack:C1:17.2")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        ("z" * 513, "X-Conversation-Id is too long (max 512 characters)"),
        ("chat: 42", "X-Conversation-Id may carry printable ASCII only, with no whitespace"),
        ("chat:é".encode(), "X-Conversation-Id may carry printable ASCII only, with no whitespace"),
    ],
)
async def test_malformed_conversations_are_refused(
    mcp_url: str, mode: Mode, conversation: str | bytes, expected: str
) -> None:
    headers = [("X-Tenant-Id", "t"), ("X-Conversation-Id", conversation)]
    assert await refusal_of(mcp_url, headers, mode) == expected


@pytest.mark.parametrize("mode", MODES)
async def test_a_conversation_sent_twice_is_refused(mcp_url: str, mode: Mode) -> None:
    headers = [("X-Tenant-Id", "t"), ("X-Conversation-Id", "c:1"), ("X-Conversation-Id", "c:1")]
    assert await refusal_of(mcp_url, headers, mode) == "X-Conversation-Id was sent more than once"


@pytest.mark.parametrize("mode", MODES)
async def test_a_bad_conversation_is_reported_before_a_missing_tenant(
    mcp_url: str, mode: Mode
) -> None:
    message = await refusal_of(mcp_url, {"X-Conversation-Id": "a b"}, mode)
    assert message.startswith("X-Conversation-Id ")
