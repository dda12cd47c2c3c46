"""Who is asking: the tenant and the conversation, read from request headers when a tool runs.

Both come from headers and never from tool arguments: a header is something an operator or the
platform configured, an argument is something the model chose. Every refusal raises
:class:`~shared.errors.InvalidInputError` whose message starts with the header the value came on.
"""

from __future__ import annotations

import re
from typing import Final

from multidict import MultiMapping

from services.api.tools.spec import ToolContext
from shared.errors import InvalidInputError

EXPLICIT_TENANT_HEADER: Final = "X-Memory-Tenant"
STAMPED_TENANT_HEADER: Final = "X-Tenant-Id"
CONVERSATION_HEADER: Final = "X-Conversation-Id"

MAX_TENANT_CHARS: Final = 128
MAX_CONVERSATION_CHARS: Final = 512

# The tenant lands in an S3 key path and in an S3 Vectors filter value: this is the intersection
# of what both accept. It also excludes "." and "..", which would walk the key path.
_TENANT_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# Printable ASCII without whitespace: the platform's ids (chat:…, slack:…:…) and percent-encodings.
_CONVERSATION_PATTERN: Final = re.compile(r"[\x21-\x7e]+")


def _single_value(headers: MultiMapping[str], name: str) -> str | None:
    """The trimmed value of ``name``; a header sent more than once is refused, not guessed at."""
    values = headers.getall(name, [])
    if len(values) > 1:
        raise InvalidInputError(name, f"{name} was sent more than once")
    if not values:
        return None
    return values[0].strip()


def conversation_of(headers: MultiMapping[str]) -> str | None:
    """The conversation id, or None when the request is in no conversation (absent or blank)."""
    value = _single_value(headers, CONVERSATION_HEADER)
    if not value:
        return None
    if len(value) > MAX_CONVERSATION_CHARS:
        raise InvalidInputError(
            CONVERSATION_HEADER,
            f"{CONVERSATION_HEADER} is too long (max {MAX_CONVERSATION_CHARS} characters)",
        )
    if _CONVERSATION_PATTERN.fullmatch(value) is None:
        raise InvalidInputError(
            CONVERSATION_HEADER,
            f"{CONVERSATION_HEADER} may carry printable ASCII only, with no whitespace",
        )
    return value


def _validated_tenant(header: str, value: str) -> str:
    if len(value) > MAX_TENANT_CHARS:
        raise InvalidInputError(header, f"{header} is too long (max {MAX_TENANT_CHARS} characters)")
    if _TENANT_PATTERN.fullmatch(value) is None:
        raise InvalidInputError(
            header,
            f"{header} must start with a letter or digit and contain only letters, digits, "
            "'.', '_' or '-'",
        )
    return value


def tenant_of(headers: MultiMapping[str]) -> str:
    """The tenant: the explicit header when it carries a value, else the platform-stamped one.

    A blank explicit header gives way to the stamped one rather than masking it: an entry that
    carries an override with no value is an accident, not a choice of tenant.
    """
    for header in (EXPLICIT_TENANT_HEADER, STAMPED_TENANT_HEADER):
        value = _single_value(headers, header)
        if value:
            return _validated_tenant(header, value)
    raise InvalidInputError(
        EXPLICIT_TENANT_HEADER,
        f"{EXPLICIT_TENANT_HEADER} header is required — set it on the MCP server entry in the "
        f"registry (Agent Studio stamps {STAMPED_TENANT_HEADER} on a bound project's runs)",
    )


def tool_context_of(headers: MultiMapping[str]) -> ToolContext:
    """Tenant and conversation of one tool call.

    The conversation is read first, so a malformed conversation header is reported even when the
    tenant header is also wrong.
    """
    conversation = conversation_of(headers)
    return ToolContext(tenant=tenant_of(headers), conversation=conversation)


__all__ = [
    "CONVERSATION_HEADER",
    "EXPLICIT_TENANT_HEADER",
    "MAX_CONVERSATION_CHARS",
    "MAX_TENANT_CHARS",
    "STAMPED_TENANT_HEADER",
    "conversation_of",
    "tenant_of",
    "tool_context_of",
]
