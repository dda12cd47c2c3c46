"""The vocabulary each tool's argument struct is written in.

A struct's fields say everything about an argument once: its type, its limits and its
description. msgspec checks what JSON Schema can say (types, integer bounds, enums, unknown
fields); :func:`about` names what it cannot (bytes as a store counts them, UTF-16 units as the
Retrieve API counts them, a memory id, a blank string), and ``services.api.tools.refusals``
enforces both and words every refusal.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Annotated, Any, Final, TypeAlias, TypeVar, Unpack

import msgspec
import msgspec.inspect as mi
from msgspec import Meta, UnsetType

from shared.errors import InvariantError
from shared.model import (
    MAX_CATEGORY_BYTES,
    MAX_TAG_BYTES,
    MEMORY_TYPES,
    SCOPES,
    MemoryType,
    Scope,
)
from shared.model.draft import Limits
from shared.ranking import RECALL_MODES, RecallMode

MIN_LIMIT: Final = 1
MAX_LIMIT: Final = 50

T = TypeVar("T")


class Checks(Limits, total=False):
    """What a field may ask beyond msgspec's own constraints (its ``Meta.extra``): a memory
    field's limits (on a list, ``max_utf8_bytes`` is each entry's), and these."""

    memory_id: bool  # a 26-character ULID, as recall and list_memories show it
    iso_time: bool  # an ISO 8601 date or date and time (a date alone is midnight UTC)
    max_utf16_units: int  # characters as JavaScript and the Retrieve API count them
    hint: str  # said after a refusal of the field's type or limit: what to do instead
    choices: tuple[str, ...]  # a Literal's values in their declared order (msgspec sorts them)


def about(description: str | None = None, **wanted: Unpack[Checks]) -> Meta:
    """A field's description and the checks it asks: ``about("…", max_utf8_bytes=128)``,
    typed, so a misspelt check cannot pass."""
    return Meta(description=description, extra=dict(wanted) or None)


def choice(values: Sequence[str]) -> Meta:
    """A Literal's values in the order ``values`` declares them, for the schema and the
    refusals (msgspec sorts them)."""
    return Meta(extra={"choices": tuple(values)})


class ToolArguments(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The base of every tool's arguments: keyword fields, none unknown, fixed once parsed.

    JSON null is read as absent before msgspec sees the arguments.
    """


# An optional argument without a natural default: UNSET when left out, and still a plain
# ``{"type": ...}`` in the schema, where ``T | None`` would add a null branch.
Maybe: TypeAlias = T | UnsetType
Limit = Annotated[int, Meta(ge=MIN_LIMIT, le=MAX_LIMIT)]
MemoryId = Annotated[str, about(memory_id=True)]
Text = Annotated[str, about(non_blank=True)]
MemoryTypeChoice = Annotated[MemoryType, choice(MEMORY_TYPES)]
# A category or tag to select by, held to the limit ``remember`` stores it under: a longer one
# can match nothing, and is a mistake worth naming rather than a silent "0 match".
CategoryFilter = Annotated[
    Text,
    about(
        f"Exact category (at most {MAX_CATEGORY_BYTES} bytes).", max_utf8_bytes=MAX_CATEGORY_BYTES
    ),
]
TagFilter = Annotated[
    Text,
    about(
        f"Memories carrying this tag (at most {MAX_TAG_BYTES} bytes).", max_utf8_bytes=MAX_TAG_BYTES
    ),
]
ScopeChoice = Annotated[Scope, choice(SCOPES)]
RecallModeChoice = Annotated[RecallMode, choice(RECALL_MODES)]


def either(values: Sequence[object]) -> str:
    """``a, b or c``: how a refusal and a description list the choices."""
    words = [str(value) for value in values]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


def given(value: T | UnsetType, default: T) -> T:
    """An optional argument's value, or ``default`` when the caller left it out."""
    return default if isinstance(value, UnsetType) else value


@functools.cache
def struct_info(shape: type[msgspec.Struct]) -> mi.StructType:
    """What msgspec knows of ``shape``: its fields, their types, limits and checks."""
    info = mi.type_info(shape)
    if not isinstance(info, mi.StructType):
        raise InvariantError(f"{shape.__name__} is not a struct")
    return info


def unwrapped(info: mi.Type) -> tuple[mi.Type, dict[str, Any]]:
    """A field's type without its Metadata, and the :class:`Checks` that Metadata carries."""
    if isinstance(info, mi.Metadata):
        return info.type, dict(info.extra or {})
    return info, {}


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def utf16_units(text: str) -> int:
    """String length as JavaScript and the Retrieve API count it (astral characters are two)."""
    return len(text.encode("utf-16-le")) // 2
