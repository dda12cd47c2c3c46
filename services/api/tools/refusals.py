"""A tool's arguments parsed into its struct, and every refusal of them worded here, once.

Arguments arrive as JSON decoded by the SDK, unvalidated. An unknown argument, a NUL and a lone
surrogate are refused first; JSON null is then read as absent and a whole number (1.0) as an
integer, as JSON has one number type; msgspec checks types, bounds and enums (``true`` is no
integer to it), and :func:`_check` the struct's other ``Checks``. msgspec words a refusal in
Python's terms, so only its path is kept: the refusal names the field and what it must be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import msgspec
import msgspec.inspect as mi

from services.api.tools.arguments import (
    ToolArguments,
    either,
    struct_info,
    unwrapped,
    utf8_bytes,
    utf16_units,
)
from shared.errors import InvalidInputError
from shared.model import parse_iso_ms, ulid_time_ms

A = TypeVar("A", bound=ToolArguments)

# The tenant and conversation are the connection's; a model that sends one is told where from.
_CONNECTION_FIELDS: Final = frozenset({"tenant", "tenantid", "tenant_id", "conversation"})
_CONNECTION_HINT: Final = (
    " (the tenant and conversation come from the connection, never from arguments:"
    " request headers over HTTP, the server's environment over stdio)"
)
_MEMORY_ID: Final = (
    "must be a memory id: 26 characters, as recall and list_memories show it ([id:…])"
)
_ISO_TIME: Final = (
    "must be an ISO 8601 date or date and time, such as 2025-01-31 or 2025-01-31T09:30:00Z "
    "(without a zone, UTC)"
)
# How a text limit is counted: bytes as a store counts them, characters as the Retrieve API does.
_MEASURES: Final = {
    "max_utf8_bytes": ("bytes", utf8_bytes),
    "max_utf16_units": ("characters", utf16_units),
}
_AT: Final = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_MISSING: Final = re.compile(r"^Object missing required field `(?P<name>\w+)`")


def parse_arguments(shape: type[A], arguments: Mapping[str, Any]) -> A:
    """``arguments`` as ``shape``; raises InvalidInputError naming the first field at fault."""
    info = struct_info(shape)
    _refuse_unknown(info, arguments, prefix="")
    _refuse_unstorable_characters(arguments)
    try:
        parsed = msgspec.convert(_as_given(arguments), shape)
    except msgspec.ValidationError as error:
        raise _translated(info, str(error)) from None
    _check(info, parsed, prefix="")
    return parsed


def _as_given(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {name: _as_given(item) for name, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_as_given(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _refuse_unknown(info: mi.StructType, given: Mapping[str, Any], *, prefix: str) -> None:
    known = {field.encode_name: field for field in info.fields}
    for name, value in given.items():
        field = known.get(name)
        if field is None:
            allowed = ", ".join(known) or "none"
            if prefix:
                message = f"unknown field `{prefix}{name}`; `{prefix[:-1]}` takes: {allowed}"
            else:
                hint = _CONNECTION_HINT if name.lower() in _CONNECTION_FIELDS else ""
                message = f"unknown argument `{name}`; this tool takes: {allowed}{hint}"
            raise InvalidInputError(f"{prefix}{name}", message)
        inner, _ = unwrapped(field.type)
        if isinstance(inner, mi.StructType) and isinstance(value, Mapping):
            _refuse_unknown(inner, value, prefix=f"{prefix}{name}.")


def _refuse_unstorable_characters(given: Mapping[str, Any], prefix: str = "") -> None:
    """In any string, list entry or object field (named ``filter.category``), before anything is
    sent: PostgreSQL rejects both, and a surrogate cannot even be encoded for S3 or the embedder."""
    for name, value in given.items():
        field = f"{prefix}{name}"
        if isinstance(value, Mapping):
            _refuse_unstorable_characters(value, prefix=f"{field}.")
            continue
        for text in value if isinstance(value, list) else (value,):
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                raise InvalidInputError(field, f"`{field}` contains a NUL character (U+0000)")
            surrogate = next((ch for ch in text if "\ud800" <= ch <= "\udfff"), None)
            if surrogate is not None:
                raise InvalidInputError(
                    field,
                    f"`{field}` contains a lone surrogate (U+{ord(surrogate):04X}), which is not "
                    "a character: send valid UTF-8",
                )


def _translated(info: mi.StructType, message: str) -> InvalidInputError:
    """msgspec's refusal as ours: the field its path names, and what that field must be."""
    at = _AT.search(message)
    names = re.findall(r"\.(\w+)", at["path"]) if at else []  # list indexes name no field
    missing = _MISSING.match(message)
    if missing:
        names.append(missing["name"])
    struct: mi.Type = info
    for depth, name in enumerate(names):
        field = next((f for f in getattr(struct, "fields", ()) if f.encode_name == name), None)
        if field is None:
            break
        struct, extra = unwrapped(field.type)
        if depth == len(names) - 1:
            return _refusal(".".join(names), struct, extra, required=field.required)
    return InvalidInputError("arguments", f"the arguments were refused: {message}")


def _refusal(
    name: str, info: mi.Type, extra: Mapping[str, Any], *, required: bool = False
) -> InvalidInputError:
    required_and = "is required and " if required else ""
    if extra.get("memory_id"):
        return InvalidInputError(name, f"`{name}` {required_and}{_MEMORY_ID}")
    if extra.get("iso_time"):
        return InvalidInputError(name, f"`{name}` {required_and}{_ISO_TIME}")
    if extra.get("non_blank"):
        return InvalidInputError(name, f"`{name}` {required_and}must be a non-empty string")
    return _refused(name, required_and + _must_be(info, extra), extra)


def _refused(name: str, what: str, extra: Mapping[str, Any]) -> InvalidInputError:
    """A refusal of a type or a limit, with the field's hint (what to do instead)."""
    hint = f" — {extra['hint']}" if "hint" in extra else ""
    return InvalidInputError(name, f"`{name}` {what}{hint}")


def _must_be(info: mi.Type, extra: Mapping[str, Any]) -> str:
    if isinstance(info, mi.IntType):
        if info.ge is not None and info.le is not None:
            return f"must be an integer between {info.ge} and {info.le}"
        return "must be an integer" + (f" of at least {info.ge}" if info.ge is not None else "")
    if isinstance(info, mi.BoolType):
        return "must be true or false"
    if isinstance(info, mi.LiteralType):
        return f"must be one of {either(extra.get('choices', info.values))}"
    if isinstance(info, mi.StrType):
        return "must be a string"
    if isinstance(info, mi.CollectionType):
        item, _ = unwrapped(info.item_type)
        return "must be an array" + (" of strings" if isinstance(item, mi.StrType) else "")
    if isinstance(info, mi.StructType):
        return "must be an object"
    return "is not a value this tool takes"


def _check(info: mi.StructType, parsed: msgspec.Struct, *, prefix: str) -> None:
    """What msgspec cannot check, on the parsed (and ``__post_init__``-normalised) values."""
    for field in info.fields:
        value = getattr(parsed, field.name)
        name = f"{prefix}{field.encode_name}"
        inner, extra = unwrapped(field.type)
        if isinstance(inner, mi.StructType) and isinstance(value, msgspec.Struct):
            _check(inner, value, prefix=f"{name}.")
        elif isinstance(value, str):
            _check_text(name, inner, value, extra, required=field.required)
        elif isinstance(inner, mi.CollectionType) and isinstance(value, list | tuple):
            _check_entries(name, inner, value, extra)


def _check_text(
    name: str, info: mi.Type, value: str, extra: Mapping[str, Any], *, required: bool
) -> None:
    if extra.get("non_blank") and not value.strip():
        raise _refusal(name, info, extra, required=required)
    if extra.get("memory_id") and ulid_time_ms(value.strip()) is None:
        raise _refusal(name, info, extra, required=required)
    if extra.get("iso_time") and parse_iso_ms(value.strip()) is None:
        raise _refusal(name, info, extra, required=required)
    if over := _over_limit(value, extra):
        size, limit, unit = over
        raise _refused(name, f"is {size} {unit}; it may be at most {limit} {unit}", extra)


def _check_entries(
    name: str,
    info: mi.CollectionType,
    entries: list[Any] | tuple[Any, ...],
    extra: Mapping[str, Any],
) -> None:
    if len(entries) > extra.get("max_entries", len(entries)):
        raise _refused(name, f"may hold at most {extra['max_entries']} entries", extra)
    _, each = unwrapped(info.item_type)
    for entry in entries:
        if isinstance(entry, str) and (over := _over_limit(entry, each)):
            _, limit, unit = over
            raise InvalidInputError(
                name,
                f'each entry of `{name}` may be at most {limit} {unit}: "{entry[:30]}…" is longer',
            )


def _over_limit(value: str, extra: Mapping[str, Any]) -> tuple[int, int, str] | None:
    """The size of ``value``, the limit it is over and their unit; None within every limit."""
    for check, (unit, measure) in _MEASURES.items():
        if check in extra and (size := measure(value)) > extra[check]:
            return size, extra[check], unit
    return None
