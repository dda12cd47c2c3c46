"""Tenant and conversation resolution from headers, as pure functions over a header multimap."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict

from services.api.http.headers import conversation_of, tenant_of, tool_context_of
from shared.errors import InvalidInputError

ACCEPTED_TENANTS = ["agent-studio", "opspresso.mcp_memory", "a", "Project1", "x" * 128]
REFUSED_TENANTS = ["../other", "a/b", ".", "..", "a b", "-leading", ".hidden", "x" * 129, "é"]


def headers(*pairs: tuple[str, str]) -> CIMultiDict[str]:
    return CIMultiDict(pairs)


@pytest.mark.parametrize("tenant", ACCEPTED_TENANTS)
@pytest.mark.parametrize("header", ["X-Memory-Tenant", "X-Tenant-Id"])
def test_valid_tenants_are_accepted_on_either_header(header: str, tenant: str) -> None:
    assert tenant_of(headers((header, tenant))) == tenant


@pytest.mark.parametrize("tenant", REFUSED_TENANTS)
@pytest.mark.parametrize("header", ["X-Memory-Tenant", "X-Tenant-Id"])
def test_invalid_tenants_are_refused_naming_the_header_they_came_on(
    header: str, tenant: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        tenant_of(headers((header, tenant)))
    assert str(refused.value).startswith(f"{header} ")
    assert refused.value.field == header


def test_too_long_tenant_names_the_limit() -> None:
    with pytest.raises(InvalidInputError, match=r"^X-Tenant-Id is too long \(max 128 characters\)"):
        tenant_of(headers(("X-Tenant-Id", "x" * 129)))


def test_tenant_is_trimmed() -> None:
    assert tenant_of(headers(("X-Memory-Tenant", "  agent-studio \t"))) == "agent-studio"


def test_explicit_tenant_wins_over_the_stamped_one() -> None:
    assert tenant_of(headers(("X-Tenant-Id", "stamped"), ("X-Memory-Tenant", "explicit"))) == (
        "explicit"
    )


def test_blank_explicit_tenant_gives_way_to_the_stamped_one() -> None:
    assert tenant_of(headers(("X-Memory-Tenant", "   "), ("X-Tenant-Id", "stamped"))) == "stamped"


def test_a_bad_explicit_tenant_is_refused_rather_than_falling_back() -> None:
    with pytest.raises(InvalidInputError, match=r"^X-Memory-Tenant must start with"):
        tenant_of(headers(("X-Memory-Tenant", "a/b"), ("X-Tenant-Id", "stamped")))


@pytest.mark.parametrize(
    "pairs",
    [
        (),
        (("X-Memory-Tenant", ""),),
        (("X-Memory-Tenant", "  "), ("X-Tenant-Id", " ")),
    ],
)
def test_no_tenant_is_refused_naming_the_explicit_header(
    pairs: tuple[tuple[str, str], ...],
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        tenant_of(headers(*pairs))
    message = str(refused.value)
    # The fix a Claude Code, Cursor or Desktop user can make: their client's headers block.
    assert message.startswith(
        'X-Memory-Tenant header is required — add "headers": {"X-Memory-Tenant": "<project>"} '
        "to this server's entry in your MCP client's configuration"
    )
    assert refused.value.field == "X-Memory-Tenant"


@pytest.mark.parametrize("header", ["X-Memory-Tenant", "X-Tenant-Id"])
def test_a_tenant_header_sent_twice_is_refused(header: str) -> None:
    with pytest.raises(InvalidInputError, match=rf"^{header} was sent more than once$"):
        tenant_of(headers((header, "a"), (header, "a")))


def test_conversation_is_optional_and_blank_means_none() -> None:
    assert conversation_of(headers()) is None
    assert conversation_of(headers(("X-Conversation-Id", "   "))) is None


@pytest.mark.parametrize(
    "conversation",
    ["chat:42", "slack:C123:1700000000.0001", "a2a:client:ctx", "api:x:%20y", "z" * 512],
)
def test_valid_conversations_are_accepted(conversation: str) -> None:
    assert conversation_of(headers(("X-Conversation-Id", f" {conversation} "))) == conversation


@pytest.mark.parametrize(
    ("conversation", "message"),
    [
        ("z" * 513, r"^X-Conversation-Id is too long \(max 512 characters\)$"),
        ("chat: 42", r"^X-Conversation-Id may carry printable ASCII only, with no whitespace$"),
        ("chat:\t42", r"^X-Conversation-Id may carry printable ASCII only"),
        ("chat:é", r"^X-Conversation-Id may carry printable ASCII only"),
    ],
)
def test_malformed_conversations_are_refused(conversation: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        conversation_of(headers(("X-Conversation-Id", conversation)))


def test_a_conversation_header_sent_twice_is_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"^X-Conversation-Id was sent more than once$"):
        conversation_of(headers(("X-Conversation-Id", "chat:1"), ("X-Conversation-Id", "chat:1")))


def test_conversation_is_checked_before_the_tenant() -> None:
    with pytest.raises(InvalidInputError, match=r"^X-Conversation-Id "):
        tool_context_of(headers(("X-Conversation-Id", "a b")))


def test_tool_context_carries_both() -> None:
    context = tool_context_of(headers(("X-Tenant-Id", "t"), ("X-Conversation-Id", "chat:1")))
    assert (context.tenant, context.conversation) == ("t", "chat:1")
