"""The MCP tools. One module per tool; :func:`build_catalogue` fixes their order."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import TYPE_CHECKING

from services.api.service import MemoryService
from services.api.tools import (
    forget,
    list_memories,
    memory_get,
    memory_history,
    memory_stats,
    recall,
    remember,
)
from services.api.tools.catalogue import guarded
from services.api.tools.spec import ToolContext, ToolResult, ToolSpec

if TYPE_CHECKING:
    from shared.docs import KnowledgeBaseRetriever

MEMORY_TOOLS: tuple[ModuleType, ...] = (
    recall,
    remember,
    list_memories,
    forget,
    memory_stats,
    memory_history,
    memory_get,
)


def build_catalogue(
    service: MemoryService,
    *,
    docs: KnowledgeBaseRetriever | None = None,
    timeout_s: float | None = None,
) -> tuple[ToolSpec, ...]:
    """The seven memory tools in order, plus search_docs last when a knowledge base is set;
    ``timeout_s`` bounds each call (TOOL_TIMEOUT_S)."""
    specs = [
        guarded(
            name=module.NAME,
            description=module.DESCRIPTION,
            schema=module.INPUT_SCHEMA,
            handle=functools.partial(module.handle, service),
            output_schema=module.OUTPUT_SCHEMA,
            timeout_s=timeout_s,
        )
        for module in MEMORY_TOOLS
    ]
    if docs is not None:
        from services.api.tools import search_docs as search_docs

        specs.append(
            guarded(
                name=search_docs.NAME,
                description=search_docs.DESCRIPTION,
                schema=search_docs.INPUT_SCHEMA,
                handle=functools.partial(search_docs.handle, docs),
                output_schema=search_docs.OUTPUT_SCHEMA,
                timeout_s=timeout_s,
            )
        )
    return tuple(specs)


__all__ = ["ToolContext", "ToolResult", "ToolSpec", "build_catalogue"]
