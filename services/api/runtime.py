"""Everything the API process holds for its lifetime, opened in order and closed in reverse.

The stores (creating the PostgreSQL schema) and the embedding model open first, side by side, so
a database the process cannot reach or a model that cannot load stops the boot before the port is
bound. On the way out the counter flush loop runs its final flush
(shielded) before the stores close.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import msgspec

from services.api.metrics import PrometheusCounterEvents, scan_metrics
from services.api.storage_probe import ReadinessCheck, storage_check
from services.api.store_deadlines import GuardedObjectStore, GuardedVectorStore, TimedEmbedder
from services.api.tools import build_catalogue
from services.api.tools.definition import ToolSpec
from shared.config import Config
from shared.counters import CounterTracker, FlushLoop
from shared.docs import open_retriever
from shared.embedding import Embedder, open_embedder
from shared.lexical import Lexicon
from shared.model import wall_clock_ms
from shared.operations import OperationsContext, operations_context
from shared.process.cli import process_id
from shared.process.listen import is_loopback_only
from shared.revisions import ReplacementLog
from shared.storage import ObjectStore, Stores, open_stores


class Runtime(msgspec.Struct, frozen=True, kw_only=True):
    """The fixed tool catalogue, the lines the boot log states about it, the readiness check
    ``GET /ready`` runs, and the operations the tools call (the memory page calls them too)."""

    catalogue: tuple[ToolSpec, ...]
    boot_lines: tuple[str, ...]
    check_ready: ReadinessCheck
    operations: OperationsContext | None = None
    # The state store (guarded), for what the memory page shares between processes.
    objects: ObjectStore | None = None


def discloses_tenant_names(config: Config) -> bool:
    """Whether an empty answer may name another tenant: only on one person's machine (``--local``
    listening on loopback alone, no MCP_API_KEY); with a key or in a cluster tenant names are
    never disclosed."""
    local = config.backend == "embedded" and is_loopback_only(config.server.hosts)
    return local and config.server.mcp_api_key is None


async def _open_stores_and_model(
    stack: contextlib.AsyncExitStack, config: Config
) -> tuple[Stores, Embedder]:
    """The stores and the embedder, opened side by side (each takes a good part of a start, and
    neither needs the other) and left to ``stack``. Either failing cancels the other, what had
    opened closes with the stack, and the failure is raised as itself."""
    try:
        async with asyncio.TaskGroup() as opening:
            stores = opening.create_task(stack.enter_async_context(open_stores(config)))
            model = opening.create_task(stack.enter_async_context(open_embedder(config)))
    except BaseExceptionGroup as failed:
        # The boot reports (and callers catch) the error itself, not the group around it.
        raise failed.exceptions[0] from None
    return stores.result(), model.result()


@contextlib.asynccontextmanager
async def open_runtime(
    config: Config, *, clock_ms: Callable[[], int] = wall_clock_ms
) -> AsyncIterator[Runtime]:
    """``clock_ms`` is the time every memory rule reads (creation, expiry, caches); tests set
    it to see a memory expire without waiting days."""
    async with contextlib.AsyncExitStack() as stack:
        stores, model = await _open_stores_and_model(stack, config)
        stack.enter_context(scan_metrics(stores.snapshots))
        embedder = TimedEmbedder(model)
        # Every storage call a tool makes is bounded (STORAGE_TIMEOUT_S), and timed with it.
        vectors = GuardedVectorStore(stores.vectors, timeout_s=config.deadlines.storage_s)
        objects = GuardedObjectStore(stores.objects, timeout_s=config.deadlines.storage_s)
        pid = process_id()
        tracker = CounterTracker(
            objects,
            process_id=pid,
            compact_threshold=config.counters.compact_threshold,
            events=PrometheusCounterEvents(),
            clock_ms=clock_ms,
        )
        await stack.enter_async_context(FlushLoop(tracker, interval_ms=config.counters.flush_ms))
        docs = await stack.enter_async_context(open_retriever(config))
        lexicon = Lexicon(objects, vectors, process_id=pid, clock_ms=clock_ms)
        stack.push_async_callback(lexicon.close)
        ops = operations_context(
            vectors=vectors,
            objects=objects,
            embedder=embedder,
            counters=tracker,
            lexicon=lexicon,
            replacements=ReplacementLog(objects, clock_ms=clock_ms),
            snapshots=stores.snapshots,
            floor=config.recall.min_similarity,
            high_similarity=config.recall.high_similarity,
            clock_ms=clock_ms,
            tenant_hints=discloses_tenant_names(config),
        )
        docs_line = (
            f"docs: knowledge base {config.aws.knowledge_base_id} — search_docs offered"
            if docs is not None
            else "docs: no KNOWLEDGE_BASE_ID — memories only, search_docs not offered"
        )
        yield Runtime(
            catalogue=build_catalogue(ops, docs=docs, timeout_s=config.deadlines.tool_s),
            # The raw stores: the probe has its own, shorter deadline and no latency samples.
            check_ready=storage_check(
                vectors=stores.vectors, objects=stores.objects, space=stores.space
            ),
            boot_lines=(
                f"{stores.description} ({config.embedding.provider}:{config.embedding.model}, "
                f"{config.embedding.dim}d, floor {config.recall.min_similarity})",
                docs_line,
            ),
            operations=ops,
            objects=objects,
        )
        # Leaving the stack: final flush (FlushLoop), then embedder, then stores.
        await tracker.settled()
