"""Argument checks shared by the tools. Each refusal names the field and the limit.

Arguments arrive as JSON decoded by the SDK, unvalidated: a model may send anything. JSON has
one number type, so 1.0 counts as the integer 1, while ``true`` is refused even though Python
treats bool as an int.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

from shared.errors import InvalidInputError
from shared.model import ulid_time_ms

MIN_LIMIT: Final = 1
MAX_LIMIT: Final = 50

T = TypeVar("T", bound=str)


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def utf16_units(text: str) -> int:
    """String length as JavaScript and the Retrieve API count it (astral characters are two)."""
    return len(text.encode("utf-16-le")) // 2


def optional(arguments: Mapping[str, Any], field: str) -> Any:
    """The value, with JSON null treated as absent."""
    return arguments.get(field)


def required_text(arguments: Mapping[str, Any], field: str) -> str:
    """A string that is not blank; returned untrimmed (what is stored is what was sent)."""
    value = optional(arguments, field)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(field, f"`{field}` is required and must be a non-empty string")
    return value


def optional_limit(arguments: Mapping[str, Any], *, default: int) -> int:
    value = optional(arguments, "limit")
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_LIMIT <= value <= MAX_LIMIT:
        raise InvalidInputError(
            "limit", f"`limit` must be an integer between {MIN_LIMIT} and {MAX_LIMIT}"
        )
    return value


def optional_int(arguments: Mapping[str, Any], field: str, *, low: int, high: int) -> int | None:
    """An integer in [low, high] (1.0 counts as 1; ``true`` is refused), or None when absent."""
    value = optional(arguments, field)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInputError(field, f"`{field}` must be an integer between {low} and {high}")
    return value


def optional_bool(arguments: Mapping[str, Any], field: str) -> bool:
    value = optional(arguments, field)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInputError(field, f"`{field}` must be true or false")
    return value


def memory_id(arguments: Mapping[str, Any], field: str) -> str:
    """A memory id as recall and list_memories show it: a 26-character ULID."""
    value = optional(arguments, field)
    text = value.strip() if isinstance(value, str) else ""
    if ulid_time_ms(text) is None:
        raise InvalidInputError(
            field,
            f"`{field}` must be a memory id: 26 characters, as recall and list_memories show it "
            "([id:…])",
        )
    return text


def optional_choice(
    arguments: Mapping[str, Any], field: str, choices: Sequence[T], *, default: T | None
) -> T | None:
    value = optional(arguments, field)
    if value is None:
        return default
    for choice in choices:
        if value == choice:
            return choice
    allowed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
    raise InvalidInputError(field, f"`{field}` must be one of {allowed}")


__all__ = [
    "MAX_LIMIT",
    "MIN_LIMIT",
    "memory_id",
    "optional",
    "optional_bool",
    "optional_choice",
    "optional_int",
    "optional_limit",
    "required_text",
    "utf8_bytes",
    "utf16_units",
]
