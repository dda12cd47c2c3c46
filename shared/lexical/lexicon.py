"""The keyword leg's I/O: one BM25 index per tenant (``tenant_index``), kept in this process from
the lexicon objects in the state store (``stored``, ``segments``), on either backend, through the
``ObjectStore`` interface.

- **Own writes are findable at once.** ``added`` and ``removed`` write one shard and apply it to
  this process's index before they return.
- **Other processes' writes** are found by the next refresh: a query that finds its tenant's index
  older than ``refresh_s`` starts one in the background (one listing of the shards above the
  watermark, then the bodies of the new ones). So another process's write becomes findable by
  keyword within ``refresh_s`` plus one refresh of the next query's.
- **After a fold** (merged.json's etag moved) the index is kept when it already holds what the
  fold absorbed, as it does when it refreshed within the lag: merged.json records the watermark
  the fold started from and a digest of the shard names it absorbed, and only that header is
  decoded. Otherwise (a fold of shards never read here, or a backfill) it is read again whole.
- **A tenant without merged.json** is backfilled on first use, written once as merged.json by a
  compare-and-swap put, so two processes doing it at once agree. Every index key is listed; a
  memory one of the tenant's shards adds is taken from the shard, and only the others are read
  from the vectors' bodies (content, category and tags): the memories of a tenant written by
  0.9.0, before the keyword leg existed, or indexed in another format version
  (``LEXICON_VERSION``: before its memories' labels were). A tenant written since has a shard
  for each memory, so its first search reads none of their contents.
- **Folding**: a refresh that finds more than ``fold_threshold`` shards older than the lag folds
  them in the background; the compactor folds on its schedule (``LEXICON_LOG``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from shared.errors import StorageError
from shared.lexical.index import LexicalIndex
from shared.lexical.query import KeywordQuery
from shared.lexical.segments import (
    LEXICON_LAYOUT,
    LEXICON_LOG,
    LexiconShard,
    MergedLexicon,
    apply,
    decode_merged,
    decode_merged_header,
)
from shared.lexical.stored import backfill, read_lexicon_shards, write_lexicon_shard
from shared.lexical.tenant_index import TenantLexicon, build_tenant_lexicon
from shared.model import Memory
from shared.model.tokens import names, terms
from shared.process.tasks import abandon, shared_run
from shared.storage.interfaces import ObjectStore, VectorStore
from shared.storage.shardlog import COMPACTION_LAG_MS, absorbable_names

logger = logging.getLogger(__name__)

DEFAULT_REFRESH_S: Final = 5.0
DEFAULT_FOLD_THRESHOLD: Final = 200
# Index entries ((memory, term) pairs) held over all tenants; the least recently searched tenant
# is dropped beyond it. 3 million is about 250 MB: ~250,000 one-sentence memories, or ~12,000
# long notes (see LexicalIndex.entries).
DEFAULT_MAX_ENTRIES: Final = 3_000_000
# Scored queries kept for a question asked again (``KeywordQuery``): as many as the question
# vectors recall keeps, within a bound on the memory they hold.
KEPT_QUERIES: Final = 512
KEPT_QUERY_BYTES: Final = 32 * 1024 * 1024
# Own shards are kept this long, to be applied again to an index read meanwhile (a read that
# started before an own write landed would otherwise miss it until its next refresh).
_OWN_SHARD_KEEP_MS: Final = 2 * COMPACTION_LAG_MS


@dataclass
class LexiconStats:
    """Counts for tests, benchmarks and metrics."""

    loads: int = 0
    backfilled: int = 0
    refreshes: int = 0
    folds: int = 0
    # Folds (another process's or this one's) taken without reading the documents again.
    adopted: int = 0


class Lexicon:
    """The per-process keyword indexes of the tenants recently searched."""

    def __init__(
        self,
        objects: ObjectStore,
        vectors: VectorStore,
        *,
        process_id: str,
        clock_ms: Callable[[], int],
        refresh_s: float = DEFAULT_REFRESH_S,
        fold_threshold: int = DEFAULT_FOLD_THRESHOLD,
        lag_ms: int = COMPACTION_LAG_MS,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        kept_queries: int = KEPT_QUERIES,
    ) -> None:
        self._objects = objects
        self._vectors = vectors
        self._process_id = process_id
        self._clock_ms = clock_ms
        self._refresh_s = refresh_s
        self._fold_threshold = fold_threshold
        self._lag_ms = lag_ms
        self._max_entries = max_entries
        self._tenants: OrderedDict[str, TenantLexicon] = OrderedDict()
        self._loading: dict[str, asyncio.Future[TenantLexicon]] = {}
        self._background: dict[str, asyncio.Task[None]] = {}
        self._own: dict[str, dict[str, tuple[int, LexiconShard]]] = {}
        self._kept_queries = kept_queries
        self._asked: OrderedDict[tuple[str, str], KeywordQuery] = OrderedDict()
        self._asked_bytes = 0
        self.stats = LexiconStats()

    async def query(self, tenant: str, query: str) -> KeywordQuery:
        """``query`` scored against all of the tenant's memories (see ``KeywordQuery``).

        Raises:
            StorageError: the tenant's first load failed.
        """
        state = await self._state(tenant)
        self._refresh_if_due(tenant, state)
        return self._scored(tenant, query, state.index)

    def _refresh_if_due(self, tenant: str, state: TenantLexicon) -> None:
        if time.monotonic() - state.checked_at >= self._refresh_s:
            self._in_background(tenant, lambda: self._refresh(tenant, state))

    async def sharing_words(self, tenant: str, text: str, *, top_k: int) -> list[str]:
        """The ids of the ``top_k`` memories whose words best match ``text``'s, best first: a
        new memory's, so not kept as a question that may be asked again. None of them while
        the tenant's index is not held by this process: it is read then, in the background,
        and the caller does not wait for a whole tenant to be read."""
        state = self._tenants.get(tenant)
        if state is None:
            self._in_background(f"load:{tenant}", functools.partial(self._loaded, tenant))
            return []
        self._tenants.move_to_end(tenant)
        self._refresh_if_due(tenant, state)
        return list(KeywordQuery(state.index, terms(text), names=names(text)).best(top_k))

    async def _loaded(self, tenant: str) -> None:
        await self._state(tenant)

    def _scored(self, tenant: str, query: str, index: LexicalIndex) -> KeywordQuery:
        """``query`` scored on ``index``: as it was when last asked, if the index has not
        changed since (a question asked again, each step of a task, a retried call)."""
        key = (tenant, query)
        scored = self._asked.pop(key, None)
        if scored is not None:
            self._asked_bytes -= scored.nbytes
        if scored is None or not scored.reads(index):
            scored = KeywordQuery(index, terms(query), names=names(query))
        self._asked[key] = scored
        self._asked_bytes += scored.nbytes
        while len(self._asked) > self._kept_queries or self._asked_bytes > KEPT_QUERY_BYTES:
            _, dropped = self._asked.popitem(last=False)
            self._asked_bytes -= dropped.nbytes
        return scored

    def _drop_asked(self, tenants: set[str]) -> None:
        """Forget the kept queries of ``tenants``, whose indexes were replaced or let go: a kept
        query holds its index."""
        for key in [key for key in self._asked if key[0] in tenants]:
            self._asked_bytes -= self._asked.pop(key).nbytes

    async def added(self, memory: Memory) -> None:
        """Record a new memory: one shard written, then this process's index updated.

        Raises:
            StorageError: the shard could not be written.
        """
        await self._write_own(memory.tenant, LexiconShard.of([memory]))

    async def removed(self, tenant: str, ids: Sequence[str]) -> None:
        """Record forgotten memories (see ``added``)."""
        if ids:
            await self._write_own(tenant, LexiconShard(remove=list(ids)))

    async def settled(self) -> None:
        """Wait for the refreshes and folds running now (tests and the benchmark use it)."""
        while self._background:
            await asyncio.gather(*self._background.values(), return_exceptions=True)

    async def close(self) -> None:
        # A load runs shielded from its waiters (``shared_run``): cancelling a background load
        # leaves it running, and its failure once the stores close would go unretrieved.
        tasks: list[asyncio.Future[Any]] = [*self._background.values(), *self._loading.values()]
        for task in tasks:
            abandon(task)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, StorageError):
                await task
        self._tenants.clear()
        self._asked.clear()
        self._asked_bytes = 0

    async def _write_own(self, tenant: str, shard: LexiconShard) -> None:
        now_ms = self._clock_ms()
        name = await write_lexicon_shard(
            self._objects, tenant, shard, process_id=self._process_id, now_ms=now_ms
        )
        own = self._own.setdefault(tenant, {})
        own[name] = (now_ms, shard)
        for old in [n for n, (at, _) in own.items() if at < now_ms - _OWN_SHARD_KEEP_MS]:
            del own[old]
        state = self._tenants.get(tenant)
        if state is not None:
            state.take(name, shard)

    async def _state(self, tenant: str) -> TenantLexicon:
        state = self._tenants.get(tenant)
        if state is not None:
            self._tenants.move_to_end(tenant)
            return state
        return await shared_run(self._loading, tenant, lambda: self._load(tenant))

    def _install(self, tenant: str, state: TenantLexicon) -> None:
        for name, (_, shard) in sorted(self._own.get(tenant, {}).items()):
            if name not in state.applied:
                state.take(name, shard)
        self._tenants[tenant] = state
        self._tenants.move_to_end(tenant)
        let_go = {tenant}
        held = sum(s.index.entries for s in self._tenants.values())
        while held > self._max_entries and len(self._tenants) > 1:
            evicted_tenant, evicted = self._tenants.popitem(last=False)
            held -= evicted.index.entries
            let_go.add(evicted_tenant)
        self._drop_asked(let_go)

    async def _load(self, tenant: str) -> TenantLexicon:
        started = time.perf_counter()
        stored = await self._objects.get(LEXICON_LAYOUT.merged_key(tenant))
        merged = decode_merged(stored.body) if stored is not None else None
        etag = stored.etag if stored is not None else None
        watermark = merged.watermark if merged is not None else ""
        names = await LEXICON_LAYOUT.names(self._objects, tenant, after=watermark)
        shards = await read_lexicon_shards(self._objects, tenant, names)
        if merged is None:
            merged, etag, names, shards = await self._backfilled(tenant, etag, shards)
        docs, labels = apply(merged.docs, merged.labels, shards.values())
        state = await asyncio.to_thread(build_tenant_lexicon, docs, labels, merged.watermark, etag)
        for name, shard in shards.items():
            state.note(name, shard)
        self._install(tenant, state)
        self.stats.loads += 1
        logger.debug(
            "lexicon_loaded",
            extra={
                "tenant": tenant,
                "documents": len(state.index),
                "shards": len(shards),
                "ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        self._maybe_fold(tenant, names)
        return state

    async def _backfilled(
        self, tenant: str, etag: str | None, shards: dict[str, LexiconShard]
    ) -> tuple[MergedLexicon, str | None, list[str], dict[str, LexiconShard]]:
        """merged.json for a tenant without one, built from ``shards`` (all of its shards: no
        fold runs before it exists) and the memories none of them adds (``backfill``); then
        the shards above its watermark: those written while it was built and, when another
        process's merged.json was written first and folded since, only the ones it left."""
        merged, etag, wrote = await backfill(
            self._objects, self._vectors, tenant, etag=etag, shards=list(shards.values())
        )
        self.stats.backfilled += wrote
        names = await LEXICON_LAYOUT.names(self._objects, tenant, after=merged.watermark)
        unread = [name for name in names if name not in shards]
        read = {**shards, **await read_lexicon_shards(self._objects, tenant, unread)}
        return merged, etag, names, {name: read[name] for name in names if name in read}

    async def _refresh(self, tenant: str, state: TenantLexicon) -> None:
        state.checked_at = time.monotonic()
        etag = await self._objects.etag(LEXICON_LAYOUT.merged_key(tenant))
        if etag != state.merged_etag and not await self._adopt_fold(tenant, state):
            # A fold this index does not already hold (or a backfill elsewhere): its shards
            # may be gone, so read it all.
            await self._load(tenant)
            self.stats.refreshes += 1
            return
        names = await LEXICON_LAYOUT.names(self._objects, tenant, after=state.watermark)
        fresh = [name for name in names if name not in state.applied]
        for name, shard in (await read_lexicon_shards(self._objects, tenant, fresh)).items():
            state.take(name, shard)
        self.stats.refreshes += 1
        self._maybe_fold(tenant, names)

    async def _adopt_fold(self, tenant: str, state: TenantLexicon) -> bool:
        """Take a fold's new watermark when this index holds what it absorbed, as it does when
        it refreshed within the lag: reading merged.json's documents again and rebuilding the
        index made every process allocate and free the whole tenant's index on every fold."""
        stored = await self._objects.get(LEXICON_LAYOUT.merged_key(tenant))
        header = decode_merged_header(stored.body) if stored is not None else None
        if stored is None or header is None or not state.holds_fold(header):
            return False
        state.adopt(header, stored.etag)
        self.stats.adopted += 1
        return True

    def _maybe_fold(self, tenant: str, names: Sequence[str]) -> None:
        # Fewer than the threshold: left to the compactor (or a later refresh).
        absorbable = absorbable_names(
            names, watermark="", now_ms=self._clock_ms(), lag_ms=self._lag_ms
        )
        if len(absorbable) > self._fold_threshold:
            self._in_background(f"fold:{tenant}", lambda: self._fold(tenant))

    async def _fold(self, tenant: str) -> None:
        folded = await LEXICON_LOG.fold(
            self._objects, tenant, now_ms=self._clock_ms(), lag_ms=self._lag_ms
        )
        if folded.shards_folded:
            self.stats.folds += 1

    def _in_background(self, key: str, work: Callable[[], Awaitable[None]]) -> None:
        """Start ``work`` unless the same key's is still running."""
        if key in self._background:
            return
        task = asyncio.ensure_future(self._quietly(key, work))
        self._background[key] = task
        task.add_done_callback(lambda _: self._background.pop(key, None))

    async def _quietly(self, key: str, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except StorageError as error:
            # Searches go on with the index as it is; the next one tries again.
            logger.warning("lexicon_refresh_failed", extra={"key": key, "error": str(error)})
