"""What a tool is, to the catalogue: its name and prose, the struct its arguments parse into,
the struct its structured output is, and a handler that takes the parsed arguments.

The handler's first argument is what the tool works on: the memory service for the memory
tools, the documentation retriever for ``search_docs``. The catalogue binds it when the runtime
opens; before that a definition is already enough to list the tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import msgspec

from services.api.answers import Reply
from services.api.structured import Output
from services.api.tools.arguments import ToolArguments
from services.api.tools.schema import json_schema
from services.api.tools.spec import ToolContext, ToolHandler, ToolSpec

Args = TypeVar("Args", bound=ToolArguments)
Backend = TypeVar("Backend")


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


__all__ = ["ToolDefinition"]
