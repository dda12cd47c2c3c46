"""Who is asking: the tenant and the conversation, read from request headers when a tool runs.

Both come from headers and never from tool arguments: a header is something an operator or the
platform configured, an argument is something the model chose. Every refusal raises
:class:`~shared.errors.InvalidInputError` whose message starts with the header the value came on.
"""

from __future__ import annotations

from typing import Final

from multidict import MultiMapping

from services.api.tools.definition import ToolContext
from shared.errors import InvalidInputError
from shared.model.ids import (
    CONVERSATION_PATTERN,
    MAX_CONVERSATION_CHARS,
    MAX_TENANT_CHARS,
    TENANT_PATTERN,
)

EXPLICIT_TENANT_HEADER: Final = "X-Memory-Tenant"
STAMPED_TENANT_HEADER: Final = "X-Tenant-Id"
CONVERSATION_HEADER: Final = "X-Conversation-Id"


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
    return validated_conversation(CONVERSATION_HEADER, value)


def validated_conversation(source: str, value: str) -> str:
    """A conversation id by the header's rules; ``source`` (a header, or the variable stdio
    reads it from) names it in the refusal."""
    if len(value) > MAX_CONVERSATION_CHARS:
        raise InvalidInputError(
            source, f"{source} is too long (max {MAX_CONVERSATION_CHARS} characters)"
        )
    if CONVERSATION_PATTERN.fullmatch(value) is None:
        raise InvalidInputError(
            source, f"{source} may carry printable ASCII only, with no whitespace"
        )
    return value


def validated_tenant(source: str, value: str) -> str:
    """A tenant by the header's rules; ``source`` names it in the refusal."""
    if len(value) > MAX_TENANT_CHARS:
        raise InvalidInputError(source, f"{source} is too long (max {MAX_TENANT_CHARS} characters)")
    if TENANT_PATTERN.fullmatch(value) is None:
        raise InvalidInputError(
            source,
            f"{source} must start with a letter or digit and contain only letters, digits, "
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
            return validated_tenant(header, value)
    raise InvalidInputError(
        EXPLICIT_TENANT_HEADER,
        f"{EXPLICIT_TENANT_HEADER} header is required — add "
        f'"headers": {{"{EXPLICIT_TENANT_HEADER}": "<project>"}} to this server\'s entry in your '
        f"MCP client's configuration (a platform that binds its runs to a project may send "
        f"{STAMPED_TENANT_HEADER} instead)",
    )


def tool_context_of(headers: MultiMapping[str]) -> ToolContext:
    """Tenant and conversation of one tool call.

    The conversation is read first, so a malformed conversation header is reported even when the
    tenant header is also wrong.
    """
    conversation = conversation_of(headers)
    return ToolContext(tenant=tenant_of(headers), conversation=conversation)
