"""Each tool's advertised outputSchema against the structuredContent it really returns.

One representative call per answer shape, through the catalogue's guarded handlers over real
operations and a real retriever talking to the Retrieve fake: the schema is derived from the
same struct the answer is built from, and this checks the two still agree on the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

import jsonschema
import msgspec
import pytest

from services.api.tools import build_catalogue, offered_tools
from services.api.tools.definition import ToolContext, ToolSpec
from shared.docs import KnowledgeBaseRetriever
from shared.operations import OperationsContext
from tests.docs.conftest import agent_runtime, docs_config, retriever  # noqa: F401  (fixtures)
from tests.fakes.fixtures import aws_test_credentials  # noqa: F401  (fixture)
from tests.operations.conftest import Clock

CTX: Final = ToolContext(tenant="acme", conversation="window-1")
OLD_PORT = "The staging API listens on port 8443."
NEW_PORT = "The staging API listens on port 9443 since the proxy moved."
NOTE = "In this window we debug the login flow."
UNKNOWN_ID = "01JD0000000000000000000000"

Ids = dict[str, str]
# (tool, arguments from the ids of what was stored first), one row per answer shape.
CALLS: Final[list[tuple[str, Callable[[Ids], dict[str, Any]]]]] = [
    ("recall", lambda ids: {"query": "which port does staging listen on"}),
    ("recall", lambda ids: {"query": "staging port", "max_tokens": 1}),
    ("recall", lambda ids: {"query": "the CEO's favourite pizza", "mode": "precision"}),
    ("remember", lambda ids: {"content": "Deploys go out on Tuesdays.", "tags": ["ops"]}),
    ("remember", lambda ids: {"content": NOTE, "expires_in_days": 3}),
    ("list_memories", lambda ids: {}),
    ("forget", lambda ids: {"id": ids["note"]}),
    ("forget", lambda ids: {"filter": {"tag": "ops"}}),
    ("forget", lambda ids: {"filter": {"tag": "ops"}, "confirm": True}),
    ("memory_stats", lambda ids: {}),
    ("memory_history", lambda ids: {"id": ids["old"]}),
    ("memory_history", lambda ids: {"id": UNKNOWN_ID}),
    ("memory_get", lambda ids: {"id": ids["old"]}),
    ("memory_get", lambda ids: {"id": UNKNOWN_ID}),
    ("search_docs", lambda ids: {"query": "pgvector extension"}),
]


async def _stored(tools: dict[str, ToolSpec], clock: Clock) -> Ids:
    async def remember(arguments: dict[str, Any]) -> str:
        clock.advance(1_000)
        result = await tools["remember"].handler(CTX, arguments)
        assert not result.is_error and result.structured is not None, result.text
        return str(result.structured["id"])

    old = await remember({"content": OLD_PORT, "tags": ["ops"], "category": "infra"})
    new = await remember({"content": NEW_PORT, "replaces": old})
    note = await remember({"content": NOTE, "scope": "conversation", "expires_in_days": 3})
    return {"old": old, "new": new, "note": note}


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
async def test_the_structured_content_is_valid_against_the_advertised_schema(
    ops: OperationsContext,
    retriever: KnowledgeBaseRetriever,  # noqa: F811
    clock: Clock,
    tool: str,
    arguments: Callable[[Ids], dict[str, Any]],
) -> None:
    tools = {spec.name: spec for spec in build_catalogue(ops, docs=retriever)}
    ids = await _stored(tools, clock)
    result = await tools[tool].handler(CTX, arguments(ids))
    assert not result.is_error and result.structured is not None, result.text
    schema = tools[tool].output_schema
    assert schema is not None
    jsonschema.Draft202012Validator(schema).validate(result.structured)
    # The advertised schema (self-contained, nullable fields folded into type lists) takes what
    # msgspec's own schema of the struct takes, field by field: each value, null, a number and
    # a string in its place.
    shape = next(d.output for d in offered_tools(with_docs=True) if d.name == tool)
    advertised = jsonschema.Draft202012Validator(schema)
    original = jsonschema.Draft202012Validator(msgspec.json.schema(shape))
    for variant in _variants(result.structured):
        assert advertised.is_valid(variant) == original.is_valid(variant), variant


def _variants(instance: Any) -> Iterator[Any]:
    """``instance`` itself, then a copy with one value anywhere in it swapped for null, 7 or
    "x", for each value in turn."""
    yield instance
    if isinstance(instance, dict):
        for key, value in instance.items():
            for other in (None, 7, "x", *_variants(value)):
                yield {**instance, key: other}
    elif isinstance(instance, list):
        for position, value in enumerate(instance):
            for other in (None, 7, "x", *_variants(value)):
                yield [*instance[:position], other, *instance[position + 1 :]]


def _objects(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _objects(item)


@pytest.mark.parametrize("definition", offered_tools(with_docs=True), ids=lambda d: d.name)
def test_every_output_object_requires_all_its_keys_and_is_self_contained(
    definition: Any,
) -> None:
    """A record always has the same keys (absent is null, never missing), and the schema holds
    no ``$ref`` a client would have to resolve."""
    schema = definition.output_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$ref" not in str(schema) and "$defs" not in str(schema)
    for shape in _objects(schema):
        assert shape.get("required", []) == list(shape["properties"]), shape
