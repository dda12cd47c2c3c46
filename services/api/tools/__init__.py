"""The MCP tools: one module per tool, each ending in its :class:`ToolDefinition`. The tables
here fix their order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from services.api.tools.catalogue import guarded
from services.api.tools.definition import ToolDefinition, ToolSpec
from services.api.tools.forget import FORGET
from services.api.tools.list_memories import LIST_MEMORIES
from services.api.tools.memory_get import MEMORY_GET
from services.api.tools.memory_history import MEMORY_HISTORY
from services.api.tools.memory_stats import MEMORY_STATS
from services.api.tools.recall import RECALL
from services.api.tools.remember import REMEMBER
from shared.operations import OperationsContext

if TYPE_CHECKING:
    from shared.docs import KnowledgeBaseRetriever

MEMORY_TOOLS: Final[tuple[ToolDefinition[Any, OperationsContext], ...]] = (
    RECALL,
    REMEMBER,
    LIST_MEMORIES,
    FORGET,
    MEMORY_STATS,
    MEMORY_HISTORY,
    MEMORY_GET,
)


def docs_tool() -> ToolDefinition[Any, KnowledgeBaseRetriever]:
    """``search_docs``, imported only for a server with a knowledge base (``shared.docs`` and
    its client are not loaded otherwise)."""
    from services.api.tools.search_docs import SEARCH_DOCS

    return SEARCH_DOCS


def offered_tools(*, with_docs: bool) -> tuple[ToolDefinition[Any, Any], ...]:
    """The tools in the order tools/list shows them: search_docs last, when offered."""
    return (*MEMORY_TOOLS, docs_tool()) if with_docs else MEMORY_TOOLS


def build_catalogue(
    ops: OperationsContext,
    *,
    docs: KnowledgeBaseRetriever | None = None,
    timeout_s: float | None = None,
) -> tuple[ToolSpec, ...]:
    """The seven memory tools in order, plus search_docs last when a knowledge base is set;
    ``timeout_s`` bounds each call (TOOL_TIMEOUT_S)."""
    memory = tuple(guarded(tool, ops, timeout_s=timeout_s) for tool in MEMORY_TOOLS)
    if docs is None:
        return memory
    return (*memory, guarded(docs_tool(), docs, timeout_s=timeout_s))


__all__ = ["MEMORY_TOOLS", "ToolDefinition", "build_catalogue", "offered_tools"]
