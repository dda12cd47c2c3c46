"""The page's state, read from its URL (and a form's fields): every value checked, and a bad one
refused by name with its limit, as the tools refuse an argument.

The URL is the whole state, so a link can be shared and a page reloaded::

    /ui                                  choose a tenant
    /ui?tenant=T[&type=&category=&tag=&stored_after=&stored_before=&notes=1&conversation=C
        &cursor=…]                       the list (list_memories' filters, cursor and pages)
    /ui?tenant=T&q=words[&mode=&limit=]  the ranking recall gives
    /ui?tenant=T&id=ID[&confirm=forget]  one memory, its history, and the actions
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, TypeVar
from urllib.parse import urlencode

import msgspec

from services.api.http.headers import validated_conversation, validated_tenant
from services.api.tools.arguments import MAX_LIMIT, MIN_LIMIT, either, utf8_bytes
from shared.errors import InvalidInputError
from shared.memories.cursor import MAX_CURSOR_CHARS
from shared.memories.listing import ListFilter, clamped_ms
from shared.model import (
    DAY_MS,
    MAX_CATEGORY_BYTES,
    MAX_CONTENT_BYTES,
    MAX_TAG_BYTES,
    MEMORY_TYPES,
    iso_ms,
    parse_iso_ms,
    ulid_time_ms,
)
from shared.ranking import DEFAULT_MODE, MODE_PROFILES, RECALL_MODES, RecallMode

# A search is typed into a box: far more than any question, far less than a URL's limit.
MAX_QUERY_CHARS: Final = 1000
_FLAG_ON: Final = frozenset({"1", "on", "true", "yes"})
_FLAG_OFF: Final = frozenset({"", "0", "off", "false", "no"})

T = TypeVar("T", bound=str)


class PageState(ListFilter, frozen=True, kw_only=True):
    """Everything a page's URL may say; None (or False) for what it does not. The list's
    filter is a listing's own (``shared.memories.listing``), so the list view passes it as is."""

    tenant: str | None = None
    conversation: str | None = None
    cursor: str | None = None
    query: str | None = None
    mode: RecallMode = DEFAULT_MODE
    limit: int | None = None
    memory_id: str | None = None
    confirm_forget: bool = False

    @property
    def result_limit(self) -> int:
        return self.limit or MODE_PROFILES[self.mode].limit

    @property
    def filtered(self) -> bool:
        return (
            any(
                (
                    self.memory_type,
                    self.category,
                    self.tag,
                    self.notes_only,
                    self.cursor is not None,
                )
            )
            or self.dated
        )

    @property
    def dated(self) -> bool:
        return self.stored_after is not None or self.stored_before is not None

    def url(self, **changes: object) -> str:
        """This state's URL with ``changes`` applied (None drops a field)."""
        state = msgspec.structs.replace(self, **changes) if changes else self
        return page_url(state)


def page_url(state: PageState) -> str:
    pairs = [
        ("tenant", state.tenant),
        ("conversation", state.conversation),
        ("type", state.memory_type),
        ("category", state.category),
        ("tag", state.tag),
        ("stored_after", as_date(state.stored_after)),
        ("stored_before", as_date(state.stored_before)),
        ("notes", "1" if state.notes_only else None),
        ("q", state.query),
        ("mode", state.mode if state.query and state.mode != DEFAULT_MODE else None),
        ("limit", str(state.limit) if state.query and state.limit else None),
        ("id", state.memory_id),
        ("confirm", "forget" if state.confirm_forget else None),
        ("cursor", state.cursor),
    ]
    kept = [(name, value) for name, value in pairs if value]
    return "/ui" + (f"?{urlencode(kept)}" if kept else "")


def as_date(ms: int | None) -> str | None:
    """A stored-time bound as the URL and the date field show it: the date alone at midnight
    UTC (what a date field sends), else the whole time."""
    if ms is None:
        return None
    return iso_ms(ms)[:10] if ms % DAY_MS == 0 else iso_ms(ms)


def _instant(values: Mapping[str, str], field: str) -> int | None:
    """A date or time, as list_memories reads ``stored_after`` and ``stored_before``."""
    value = _text(values, field)
    if value is None:
        return None
    ms = parse_iso_ms(value)
    if ms is None:
        raise InvalidInputError(
            field, f"`{field}` must be an ISO 8601 date or date and time, such as 2025-01-31"
        )
    return clamped_ms(ms)


def _cursor(values: Mapping[str, str]) -> str | None:
    value = _text(values, "cursor")
    if value is not None and len(value) > MAX_CURSOR_CHARS:
        raise InvalidInputError(
            "cursor", f"`cursor` is longer than any cursor this page makes ({MAX_CURSOR_CHARS})"
        )
    return value


def _text(values: Mapping[str, str], field: str) -> str | None:
    """The trimmed value, None when blank; a NUL or a lone surrogate refused by name (neither
    is a character anything stores)."""
    raw = values.get(field)
    if raw is None:
        return None
    _refuse_unstorable(field, raw)
    return raw.strip() or None


def _refuse_unstorable(field: str, text: str) -> None:
    if "\x00" in text:
        raise InvalidInputError(field, f"`{field}` contains a NUL character (U+0000)")
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise InvalidInputError(field, f"`{field}` is not valid UTF-8 text")


def _bounded(values: Mapping[str, str], field: str, *, max_bytes: int) -> str | None:
    value = _text(values, field)
    if value is not None and utf8_bytes(value) > max_bytes:
        raise InvalidInputError(field, f"`{field}` may be at most {max_bytes} bytes")
    return value


def _choice(values: Mapping[str, str], field: str, choices: Sequence[T]) -> T | None:
    value = _text(values, field)
    if value is None:
        return None
    for choice in choices:
        if value == choice:
            return choice
    allowed = f"one of {either(choices)}" if len(choices) > 1 else f"`{choices[0]}`"
    raise InvalidInputError(field, f"`{field}` must be {allowed}")


def _flag(values: Mapping[str, str], field: str) -> bool:
    value = (_text(values, field) or "").lower()
    if value in _FLAG_ON:
        return True
    if value in _FLAG_OFF:
        return False
    raise InvalidInputError(field, f"`{field}` must be 1 or 0")


def memory_id_of(values: Mapping[str, str], field: str) -> str | None:
    value = _text(values, field)
    if value is not None and ulid_time_ms(value) is None:
        raise InvalidInputError(
            field, f"`{field}` must be a memory id: 26 characters, as the list shows it"
        )
    return value


def tenant_of(values: Mapping[str, str]) -> str | None:
    value = _text(values, "tenant")
    return validated_tenant("tenant", value) if value is not None else None


def conversation_of(values: Mapping[str, str]) -> str | None:
    value = _text(values, "conversation")
    return validated_conversation("conversation", value) if value is not None else None


def _limit(values: Mapping[str, str]) -> int | None:
    value = _text(values, "limit")
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or not MIN_LIMIT <= int(value) <= MAX_LIMIT:
        raise InvalidInputError(
            "limit", f"`limit` must be an integer between {MIN_LIMIT} and {MAX_LIMIT}"
        )
    return int(value)


def _query(values: Mapping[str, str]) -> str | None:
    value = _text(values, "q")
    if value is not None and len(value) > MAX_QUERY_CHARS:
        raise InvalidInputError("q", f"`q` may be at most {MAX_QUERY_CHARS} characters")
    return value


def page_state(values: Mapping[str, str]) -> PageState:
    """The state a URL's query string says.

    Raises:
        InvalidInputError: a value breaks its rule (the error names the parameter).
    """
    confirm = _choice(values, "confirm", ("forget",))
    return PageState(
        tenant=tenant_of(values),
        conversation=conversation_of(values),
        memory_type=_choice(values, "type", MEMORY_TYPES),
        category=_bounded(values, "category", max_bytes=MAX_CATEGORY_BYTES),
        tag=_bounded(values, "tag", max_bytes=MAX_TAG_BYTES),
        notes_only=_flag(values, "notes"),
        stored_after=_instant(values, "stored_after"),
        stored_before=_instant(values, "stored_before"),
        cursor=_cursor(values),
        query=_query(values),
        mode=_choice(values, "mode", RECALL_MODES) or DEFAULT_MODE,
        limit=_limit(values),
        memory_id=memory_id_of(values, "id"),
        confirm_forget=confirm is not None,
    )


def corrected_content(values: Mapping[str, str]) -> str:
    """The corrected text of a replace form, as ``remember`` holds ``content``: not blank, at
    most ``MAX_CONTENT_BYTES``, stored exactly as typed (only the browser's CRLF made LF)."""
    raw = values.get("content", "")
    _refuse_unstorable("content", raw)
    content = raw.replace("\r\n", "\n")
    if not content.strip():
        raise InvalidInputError("content", "`content` is required: type the corrected fact")
    size = utf8_bytes(content)
    if size > MAX_CONTENT_BYTES:
        raise InvalidInputError(
            "content", f"`content` is {size} bytes; it may be at most {MAX_CONTENT_BYTES} bytes"
        )
    return content
