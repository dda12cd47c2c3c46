"""A tool's ``inputSchema`` and ``outputSchema``, as msgspec derives them from the tool's
argument struct and output struct.

msgspec writes a struct as a ``$ref`` into ``$defs`` with a ``title``; tools/list shows one
self-contained object schema instead, as the tools always did: not every client resolves a
``$ref``, and a title would only repeat a Python class name.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import msgspec.inspect as mi

from services.api.tools.arguments import struct_info, unwrapped


@functools.cache
def json_schema(shape: type[msgspec.Struct]) -> dict[str, Any]:
    """``shape``'s JSON Schema with every ``$ref`` inlined; the tool's description is its
    prose, so the struct's own docstring is not repeated here."""
    generated = msgspec.json.schema(shape)
    schema = _inlined(generated, generated.get("$defs", {}))
    schema.pop("description", None)
    _in_declared_order(schema, struct_info(shape))
    return schema  # type: ignore[no-any-return]


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list | tuple):  # a tuple default, such as tags=(), is a JSON array
        return [_inlined(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    # The field's own keys (its description) win over the struct's docstring.
    merged = {**defs[ref.rsplit("/", 1)[-1]], **node} if ref else node
    tidy = {
        key: _inlined(value, defs)
        for key, value in merged.items()
        if key not in {"$ref", "$defs", "title"} and not (key == "required" and not value)
    }
    choices = tidy.get("enum")
    if isinstance(choices, list) and all(isinstance(value, str) for value in choices):
        # msgspec leaves a Literal's enum untyped; clients that build function declarations
        # from a schema want every property typed.
        tidy.setdefault("type", "string")
    return tidy


def _in_declared_order(schema: dict[str, Any], info: mi.StructType) -> None:
    """msgspec sorts a Literal's values; a field's ``choices`` keep the order they were written
    in, and a model reads precision, balanced, exploratory as the scale it is."""
    for field in info.fields:
        shown = schema["properties"][field.encode_name]
        inner, checks = unwrapped(field.type)
        if "choices" in checks:
            shown["enum"] = list(checks["choices"])
        if isinstance(inner, mi.StructType):
            _in_declared_order(shown, inner)


__all__ = ["json_schema"]
