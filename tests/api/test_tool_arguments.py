"""Each tool's argument struct: the schema tools/list advertises, every limit the struct declares
refused by name with that limit, and the descriptions that state those limits.

The limit cases are read from the structs themselves, so a limit added or changed is tested
without this file changing: what is declared once is what is refused and what is described.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import jsonschema
import msgspec.inspect as mi
import pytest

from services.api.tools import offered_tools
from services.api.tools.arguments import ToolArguments, struct_info, unwrapped
from services.api.tools.definition import ToolDefinition
from services.api.tools.forget import ForgetArguments
from services.api.tools.recall import RecallArguments
from services.api.tools.refusals import parse_arguments
from services.api.tools.remember import RememberArguments
from services.api.tools.search_docs import SearchDocsArguments
from shared.errors import InvalidInputError

TOOLS: dict[str, ToolDefinition[Any, Any]] = {
    tool.name: tool for tool in offered_tools(with_docs=True)
}
ID = "01JAAAAAAAAAAAAAAAAAAAAAAA"
# The least each tool needs besides the field under test.
BASE: dict[str, dict[str, Any]] = {
    "recall": {"query": "deploy"},
    "remember": {"content": "The API listens on port 8080."},
    "forget": {"filter": {"tag": "t"}},
    "memory_history": {"id": ID},
    "memory_get": {"id": ID},
    "search_docs": {"query": "deploy"},
}
REQUIRED = {
    "recall": ["query"],
    "remember": ["content"],
    "memory_history": ["id"],
    "memory_get": ["id"],
    "search_docs": ["query"],
}


def refusal(tool: str, arguments: dict[str, Any]) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as raised:
        parse_arguments(TOOLS[tool].arguments, arguments)
    return raised.value


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from nodes(value)


@pytest.mark.parametrize("tool", TOOLS)
def test_each_schema_is_one_closed_object_schema_any_client_reads(tool: str) -> None:
    schema = TOOLS[tool].input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema.get("required") == REQUIRED.get(tool)
    assert list(schema["properties"]) == list(TOOLS[tool].arguments.__struct_fields__)
    for node in nodes(schema):
        assert not {"$ref", "$defs", "title", "anyOf"} & node.keys(), node
        if "enum" in node:
            assert node["type"] == "string", node
    for name, shown in schema["properties"].items():
        assert shown.get("description"), (tool, name)


def test_choices_are_listed_in_their_declared_order() -> None:
    recall = TOOLS["recall"].input_schema["properties"]
    assert recall["mode"]["enum"] == ["precision", "balanced", "exploratory"]
    kinds = ["project", "pattern", "reference", "conversation"]
    assert TOOLS["remember"].input_schema["properties"]["type"]["enum"] == kinds
    nested = TOOLS["forget"].input_schema["properties"]["filter"]
    assert nested["properties"]["type"]["enum"] == kinds and nested["additionalProperties"] is False
    assert nested["description"].startswith("Instead of id")


@pytest.mark.parametrize("tool", TOOLS)
def test_a_valid_call_satisfies_the_advertised_schema(tool: str) -> None:
    arguments = BASE.get(tool, {})
    jsonschema.validate(arguments, TOOLS[tool].input_schema)
    parse_arguments(TOOLS[tool].arguments, arguments)


class Limit(NamedTuple):
    tool: str
    field: str  # its path: filter.tag
    kind: str
    limit: int
    at: Any  # a value right at the limit, which is taken
    past: Any  # the value just past it, which is refused
    words: str  # what the refusal says


def declared_limits() -> Iterator[Limit]:
    for tool, definition in TOOLS.items():
        shape: type[ToolArguments] = definition.arguments
        yield from _limits(tool, struct_info(shape), prefix="")


def _limits(tool: str, info: mi.StructType, *, prefix: str) -> Iterator[Limit]:
    for field in info.fields:
        name = f"{prefix}{field.encode_name}"
        inner, checks = unwrapped(field.type)
        if isinstance(inner, mi.StructType):
            yield from _limits(tool, inner, prefix=f"{name}.")
        if isinstance(inner, mi.IntType) and inner.ge is not None:
            floor = f"between {inner.ge} and" if inner.le is not None else f"of at least {inner.ge}"
            words = f"must be an integer {floor}"
            yield Limit(tool, name, "ge", inner.ge, inner.ge, inner.ge - 1, words)
        if isinstance(inner, mi.IntType) and inner.le is not None:
            words = f"must be an integer between {inner.ge} and {inner.le}"
            yield Limit(tool, name, "le", inner.le, inner.le, inner.le + 1, words)
        if "max_utf8_bytes" in checks:  # é is two bytes
            n = checks["max_utf8_bytes"]
            yield Limit(tool, name, "bytes", n, "é" * (n // 2), "é" * (n // 2 + 1), f"{n} bytes")
        if "max_utf16_units" in checks:  # an emoji is two units
            n = checks["max_utf16_units"]
            words = f"at most {n} characters"
            yield Limit(tool, name, "units", n, "😀" * (n // 2), "😀" * (n // 2 + 1), words)
        if "max_entries" in checks:
            n = checks["max_entries"]
            entries = [f"t{i}" for i in range(n + 1)]
            yield Limit(tool, name, "entries", n, entries[:n], entries, f"at most {n} entries")
        if isinstance(inner, mi.CollectionType):
            _, each = unwrapped(inner.item_type)
            if "max_utf8_bytes" in each:
                n = each["max_utf8_bytes"]
                yield Limit(tool, name, "each", n, ["t" * n], ["t" * (n + 1)], f"at most {n} bytes")


def _with(tool: str, path: str, value: Any) -> dict[str, Any]:
    arguments = {
        key: dict(v) if isinstance(v, dict) else v for key, v in BASE.get(tool, {}).items()
    }
    *outer, last = path.split(".")
    target = arguments
    for name in outer:
        target = target.setdefault(name, {})
    target[last] = value
    return arguments


LIMITS = list(declared_limits())
each_limit = pytest.mark.parametrize(
    "limit", LIMITS, ids=[f"{case.tool}.{case.field}.{case.kind}" for case in LIMITS]
)


def test_the_limits_read_from_the_structs_are_every_limit_the_tools_have() -> None:
    assert sorted({f"{case.tool}.{case.field}" for case in LIMITS}) == [
        "forget.filter.category",
        "forget.filter.older_than_days",
        "forget.filter.tag",
        "list_memories.category",
        "list_memories.cursor",
        "list_memories.limit",
        "list_memories.tag",
        "recall.limit",
        "recall.max_tokens",
        "remember.category",
        "remember.content",
        "remember.expires_in_days",
        "remember.tags",
        "search_docs.limit",
        "search_docs.query",
    ]


@each_limit
def test_each_declared_limit_is_taken_at_the_limit_and_refused_past_it(limit: Limit) -> None:
    parse_arguments(TOOLS[limit.tool].arguments, _with(limit.tool, limit.field, limit.at))
    error = refusal(limit.tool, _with(limit.tool, limit.field, limit.past))
    assert error.field == limit.field
    text = str(error)
    assert text.startswith(f"`{limit.field}` ") or f"of `{limit.field}`" in text, text
    assert limit.words in text, text


@each_limit
def test_each_declared_limit_is_stated_in_the_description(limit: Limit) -> None:
    if limit.kind == "ge" and limit.limit <= 1:
        return  # "at least 1" is what an integer count means; descriptions say the ceiling
    schema = TOOLS[limit.tool].input_schema
    for name in limit.field.split("."):
        schema = schema["properties"][name]
    description = schema["description"]
    assert str(limit.limit) in description or f"{limit.limit:,}" in description, description


@pytest.mark.parametrize(
    ("tool", "arguments", "field", "words"),
    [
        ("recall", {}, "query", "`query` is required and must be a non-empty string"),
        ("recall", {"query": "  "}, "query", "must be a non-empty string"),
        ("recall", {"query": 42}, "query", "must be a non-empty string"),
        ("recall", {"query": "x", "limit": "3"}, "limit", "must be an integer between 1 and 50"),
        ("recall", {"query": "x", "limit": True}, "limit", "must be an integer between 1 and 50"),
        ("recall", {"query": "x", "limit": 1.5}, "limit", "must be an integer between 1 and 50"),
        ("recall", {"query": "x", "mode": "fast"}, "mode", "precision, balanced or exploratory"),
        (
            "recall",
            {"query": "x", "max_tokens": 0},
            "max_tokens",
            "`max_tokens` must be an integer of at least 1 — a larger one is clamped to 16000",
        ),
        ("remember", {"content": "x", "category": 7}, "category", "`category` must be a string"),
        ("remember", {"content": "x", "tags": "a,b"}, "tags", "must be an array of strings"),
        ("remember", {"content": "x", "tags": ["a", 3]}, "tags", "must be an array of strings"),
        ("remember", {"content": "x", "scope": "all"}, "scope", "one of project or conversation"),
        ("remember", {"content": "x", "replaces": 7}, "replaces", "must be a memory id"),
        ("remember", {"content": "x", "replaces": "abc"}, "replaces", "must be a memory id"),
        ("memory_get", {}, "id", "`id` is required and must be a memory id: 26 characters"),
        ("forget", {"filter": "tag=t"}, "filter", "`filter` must be an object"),
        ("forget", {"filter": {"tag": " "}}, "filter.tag", "must be a non-empty string"),
        ("forget", {"filter": {"type": "x"}}, "filter.type", "project, pattern, reference or"),
        ("forget", {"filter": {"colour": 1}}, "filter.colour", "`filter` takes: type, category"),
        ("forget", {"confirm": "yes", "filter": {}}, "confirm", "must be true or false"),
        ("memory_stats", {"tenant": "t"}, "tenant", "request headers over HTTP"),
        ("memory_stats", {"x": None}, "x", "unknown argument `x`; this tool takes: none"),
        ("remember", {"content": "a\x00b"}, "content", "contains a NUL character"),
        ("forget", {"filter": {"tag": "\ud800"}}, "filter.tag", "lone surrogate (U+D800)"),
        ("list_memories", {"stored_after": "last week"}, "stored_after", "ISO 8601 date or"),
        ("list_memories", {"stored_before": "2025-13-01"}, "stored_before", "such as 2025-01-31"),
        ("list_memories", {"stored_after": 20250101}, "stored_after", "an ISO 8601 date"),
        ("list_memories", {"cursor": " "}, "cursor", "`cursor` must be a non-empty string"),
        ("list_memories", {"tag": "t" * 65}, "tag", "it may be at most 64 bytes"),
        ("list_memories", {"category": "c" * 129}, "category", "it may be at most 128 bytes"),
    ],
)
def test_each_kind_of_refusal_names_the_field_and_what_it_must_be(
    tool: str, arguments: dict[str, Any], field: str, words: str
) -> None:
    error = refusal(tool, arguments)
    assert error.field == field and words in str(error), str(error)


def test_null_is_absent_and_a_whole_number_is_an_integer() -> None:
    parsed = parse_arguments(RecallArguments, {"query": "x", "limit": 7.0, "mode": None})
    assert parsed.limit == 7 and parsed.mode == "balanced"
    forget = parse_arguments(ForgetArguments, {"filter": {"tag": "t", "type": None}, "id": None})
    assert isinstance(forget.filter, ToolArguments) and forget.filter.tag == "t"


def test_limits_count_what_is_kept() -> None:
    """Tags are stored trimmed, blank ones dropped; a docs query is sent trimmed."""
    tags = [" a ", " ", *(f"t{i}" for i in range(19))]
    parsed = parse_arguments(RememberArguments, {"content": "x", "tags": tags})
    assert parsed.tags[0] == "a" and len(parsed.tags) == 20
    query = parse_arguments(SearchDocsArguments, {"query": "  " + "x" * 1000 + "  "})
    assert query.query == "x" * 1000
