"""What a tool is, to the catalogue: its name and prose, the struct its arguments parse into,
the struct its structured output is, and a handler that takes the parsed arguments.

The handler's first argument is what the tool works on: the operations' context
(``shared.operations``) for the memory tools, the documentation retriever for ``search_docs``.
The catalogue binds it when the runtime opens; before that a definition is already enough to
list the tool.

Its ``inputSchema`` and ``outputSchema`` are what msgspec derives from the two structs, with
every ``$ref`` inlined and no ``title``: tools/list shows one self-contained object schema, as
the tools always did, since not every client resolves a ``$ref`` and a title would only repeat
a Python class name.

To the transport a tool is a :class:`ToolSpec`: a name, a schema, a description and one async
handler. Handlers never see HTTP: the transport resolves the tenant and conversation from
headers when a tool runs and hands them over in :class:`ToolContext`. That is what keeps
"tenant never from a tool argument" true by construction.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, TypeVar

import msgspec
import msgspec.inspect as mi

from services.api.tools.arguments import ToolArguments, struct_info, unwrapped
from services.api.tools.structured import Output, Reply

Args = TypeVar("Args", bound=ToolArguments)
Backend = TypeVar("Backend")


class ToolContext(msgspec.Struct, frozen=True, kw_only=True):
    """Who is asking: the tenant (required) and the conversation (optional), from headers."""

    tenant: str
    conversation: str | None = None
    # What puts a call in a conversation on this transport, for a refusal that needs one to say:
    # a header over HTTP; over stdio, which has no headers, the server's environment.
    conversation_via: str = "an X-Conversation-Id header on the request"
    # What names the tenant on this transport, for the hint an empty answer may give.
    tenant_via: str = "X-Memory-Tenant"


class ToolResult(msgspec.Struct, frozen=True, kw_only=True):
    """The text the model reads, whether it reports a failure, and the same facts as JSON for
    clients that parse them (``structuredContent``; None on a failure)."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None


ToolHandler = Callable[[ToolContext, Mapping[str, Any]], Awaitable[ToolResult]]


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of the catalogue, fixed for the process's lifetime."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: ToolHandler
    output_schema: dict[str, Any] | None = None


class ToolDefinition(msgspec.Struct, Generic[Args, Backend], frozen=True, kw_only=True):
    name: str
    description: str
    arguments: type[Args]
    output: type[Output]
    handle: Callable[[Backend, ToolContext, Args], Awaitable[Reply]]

    @property
    def input_schema(self) -> dict[str, Any]:
        return json_schema(self.arguments)

    @property
    def output_schema(self) -> dict[str, Any]:
        return json_schema(self.output)

    def spec(self, handler: ToolHandler) -> ToolSpec:
        """The tool as the transport lists it, answered by ``handler``."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            handler=handler,
            output_schema=self.output_schema,
        )


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
    return _nullable_as_type_list(tidy)


def _nullable_as_type_list(node: dict[str, Any]) -> dict[str, Any]:
    """``X | None`` as msgspec writes it (``anyOf: [X, {"type": "null"}]``) folded into ``X``
    with ``"type": [X's type, "null"]``: the same instances pass, and a validator checks one
    schema rather than trying two per field of every record (the official Python client
    re-validates every tool result against its outputSchema). ``properties``, ``required`` and
    ``items`` apply only to instances of their type, so a null passes them untouched."""
    choices = node.get("anyOf")
    null = {"type": "null"}
    if not isinstance(choices, list) or len(choices) != 2 or null not in choices:
        return node
    other = choices[0] if choices[1] == null else choices[1]
    kind = other.get("type")
    if (
        not isinstance(kind, str)
        or {"enum", "const"} & other.keys()
        or other.keys() & (node.keys() - {"anyOf"})
    ):
        return node
    folded = {key: value for key, value in node.items() if key != "anyOf"}
    return {**folded, **other, "type": [kind, "null"]}


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
