"""The memory operations, one module per use case, each a plain function of one
:class:`OperationsContext`: ``remember``, ``recall``, ``browse`` (list, stats, the page's reads),
``forget`` and ``history`` (a fact's versions, one memory whole). The only place the vector
store, the state store, the embedder and the counters are combined; the MCP tools and the memory
page validate arguments and word the answer, this decides."""

from shared.operations.context import OperationsContext, operations_context

__all__ = ["OperationsContext", "operations_context"]
