"""The cursor a listing answers with when more memories match: where the next page starts, and the
filters it was made for, as one opaque token (base64url of a small versioned msgpack array).

The position is the last memory shown. The walk is newest first by id, and ids are time-ordered,
so a memory written while someone pages sorts before the position and never shifts it: a walk
with the cursor shows each memory that was there when it began exactly once. A memory forgotten
meanwhile is simply not shown.

The filters ride along so that a cursor is never read against other filters, where its position
would silently skip or repeat memories: that is refused, naming the filters that differ.
"""

from __future__ import annotations

import base64
import binascii
from typing import Final

import msgspec

from shared.errors import InvalidInputError
from shared.memories.listing import ListFilter
from shared.model import MemoryType, ulid_time_ms

CURSOR_VERSION: Final = 1
# A cursor this server makes is under 400 characters (a 128-byte category and a 64-byte tag at
# most); anything much longer is not one, and is refused before it is decoded.
MAX_CURSOR_CHARS: Final = 1024
# The filters by the names a caller gives them (the tool's arguments, the page's parameters).
_OUTWARD: Final = {"memory_type": "type", "notes_only": "notes"}


class _Cursor(msgspec.Struct, frozen=True, array_like=True):
    version: int
    after: str
    memory_type: MemoryType | None
    category: str | None
    tag: str | None
    notes_only: bool
    stored_after: int | None
    stored_before: int | None


def _filters(match: ListFilter) -> dict[str, object]:
    """``match``'s listing filters alone (the page's state is a ListFilter with more fields)."""
    return {name: getattr(match, name) for name in ListFilter.__struct_fields__}


def make_cursor(after: str, match: ListFilter) -> str:
    """The cursor of the page that follows the memory ``after`` under ``match``."""
    cursor = _Cursor(version=CURSOR_VERSION, after=after, **_filters(match))  # type: ignore[arg-type]
    return base64.urlsafe_b64encode(msgspec.msgpack.encode(cursor)).rstrip(b"=").decode("ascii")


def _refused(field: str, why: str, remedy: str = "") -> InvalidInputError:
    remedy = remedy or f"pass the `{field}` value of the previous answer unchanged"
    return InvalidInputError(
        field, f"`{field}` {why}: {remedy}, or leave `{field}` out to start again from the newest"
    )


def _decoded(token: str, field: str) -> _Cursor:
    if len(token) > MAX_CURSOR_CHARS:
        raise _refused(field, f"is longer than any cursor this server makes ({MAX_CURSOR_CHARS})")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        cursor = msgspec.msgpack.decode(raw, type=_Cursor)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise _refused(field, "is not a cursor this server made") from None
    if cursor.version != CURSOR_VERSION:
        raise _refused(field, "was made by another version of this server")
    if ulid_time_ms(cursor.after) is None:
        raise _refused(field, "is not a cursor this server made")
    return cursor


def cursor_position(token: str, match: ListFilter, *, field: str = "cursor") -> str:
    """The id of the memory a cursor resumes after, when it was made for ``match``'s filters.

    Raises:
        InvalidInputError: (``field``) the token is not a cursor, or it was made for other
            filters; the message names the filters that differ.
    """
    cursor = _decoded(token.strip(), field)
    made_for = {name: getattr(cursor, name) for name in ListFilter.__struct_fields__}
    differ = [
        _OUTWARD.get(name, name)
        for name, value in _filters(match).items()
        if made_for[name] != value
    ]
    if differ:
        named = ", ".join(f"`{name}`" for name in differ)
        raise _refused(
            field,
            f"was made for other filters (they differ in {named})",
            "repeat the filters of the call that returned it",
        )
    return cursor.after
