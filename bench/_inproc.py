"""The memory operations in the runner's process, against the same embedded database the API
process uses (pgserver lets several processes share one data dir).

Used for what HTTP cannot do fast or cannot show: preloading thousands of memories (the stores
and the embedder, in batches; dedup is skipped, nothing else), copying a tenant, plain cosine
top-k straight from the vector store, and reading counters against a shard backlog (recall's
steps one by one: ``bench._steps``). Nothing here is what the speed figures time: those go
through HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import msgspec
import numpy as np

from shared.config import Config, load_config
from shared.counters import CounterTracker
from shared.embedding import Embedder, open_embedder
from shared.lexical import KeywordQuery, Lexicon
from shared.model import Hit, Memory, MemoryType, index_key, iso_ms, new_ulid, wall_clock_ms
from shared.model.keys import RevisionKind, link_key, parse_revision_key, replaced_prefix
from shared.operations import OperationsContext, operations_context
from shared.operations.fusion import fuse, with_feedback
from shared.operations.recall import KEYWORD_CANDIDATES, RECALL_CANDIDATES
from shared.ranking import Candidate
from shared.revisions import ReplacementLog
from shared.storage import Stores, open_stores

EMBED_BATCH: Final = 64
PUT_CONCURRENCY: Final = 8


@dataclass
class Local:
    config: Config
    stores: Stores
    embedder: Embedder
    tracker: CounterTracker
    ops: OperationsContext


def local_config(data_dir: Path) -> Config:
    return load_config({}, local=True, data_dir=data_dir)


@contextlib.asynccontextmanager
async def open_local(data_dir: Path) -> AsyncIterator[Local]:
    """Stores, embedder, counters and the operations' context wired as ``services.api.runtime``
    wires them, minus the flush loop: accesses this process records are never written."""
    config = local_config(data_dir)
    async with open_stores(config) as stores, open_embedder(config) as embedder:
        yield wired_local(config, stores, embedder)


def wired_local(config: Config, stores: Stores, embedder: Embedder) -> Local:
    """The counters and the operations' context over opened ``stores`` (see ``open_local``)."""
    tracker = CounterTracker(
        stores.objects,
        process_id="bench",
        compact_threshold=config.counters.compact_threshold,
    )
    ops = operations_context(
        vectors=stores.vectors,
        objects=stores.objects,
        embedder=embedder,
        counters=tracker,
        # No scored question kept: each recall here pays its keyword leg, as one not asked
        # lately (the served figures keep them, as the server does).
        lexicon=Lexicon(
            stores.objects,
            stores.vectors,
            process_id="bench",
            clock_ms=wall_clock_ms,
            kept_queries=0,
        ),
        replacements=ReplacementLog(stores.objects, clock_ms=wall_clock_ms),
        snapshots=stores.snapshots,
        floor=config.recall.min_similarity,
        high_similarity=config.recall.high_similarity,
    )
    return Local(config, stores, embedder, tracker, ops)


async def _put_all(
    local: Local, memories: Sequence[Memory], vectors: Sequence[list[float]]
) -> None:
    """The vector first, then the index key, as ``shared.operations.remember`` writes them."""
    gate = asyncio.Semaphore(PUT_CONCURRENCY)

    async def one(memory: Memory, vector: list[float]) -> None:
        async with gate:
            await local.stores.vectors.put(memory, vector)
            await local.stores.objects.put(index_key(memory), "")

    await asyncio.gather(*(one(m, v) for m, v in zip(memories, vectors, strict=True)))


async def preload(
    local: Local,
    tenant: str,
    text_of: Callable[[int], str],
    indices: range,
    *,
    cache: dict[str, list[float]],
    memory_type: MemoryType = "project",
) -> float:
    """Store ``text_of(i)`` for every i; texts not in ``cache`` are embedded in batches (and
    added to it). The seconds it took."""
    started = time.perf_counter()
    for start in range(indices.start, indices.stop, EMBED_BATCH * 4):
        batch = range(start, min(start + EMBED_BATCH * 4, indices.stop))
        texts = [text_of(i) for i in batch]
        # By length: a batch is padded to its longest text, so similar lengths waste less.
        missing = sorted({t for t in texts if t not in cache}, key=len)
        for offset in range(0, len(missing), EMBED_BATCH):
            chunk = missing[offset : offset + EMBED_BATCH]
            cache.update(zip(chunk, await local.embedder.embed_many(chunk), strict=True))
        memories = []
        for text in texts:
            now_ms = time.time_ns() // 1_000_000
            memories.append(
                Memory(
                    id=new_ulid(now_ms),
                    tenant=tenant,
                    content=text,
                    memory_type=memory_type,
                    created_at=iso_ms(now_ms),
                )
            )
        await _put_all(local, memories, [cache[t] for t in texts])
    return time.perf_counter() - started


async def copy_tenant(local: Local, source: str, targets: Sequence[str], ids: Sequence[str]) -> int:
    """Write the memories ``ids`` of ``source`` into each target tenant under the same ids and
    creation times, re-embedding their text (once) with the same model, with the revision
    records between them (the probable updates ``remember`` linked, what a caller replaced):
    fresh tenants with no access counts, whose recall reads the links the source's would."""
    found: list[Memory] = []
    for start in range(0, len(ids), 500):
        found += await local.stores.vectors.get(source, ids[start : start + 500])
    # By length: a batch is padded to its longest text, so similar lengths waste less.
    found.sort(key=lambda m: len(m.content))
    copied = 0
    for start in range(0, len(found), EMBED_BATCH):
        batch = found[start : start + EMBED_BATCH]
        vectors = await local.embedder.embed_many([m.content for m in batch])
        for target in targets:
            memories = [msgspec.structs.replace(m, tenant=target) for m in batch]
            await _put_all(local, memories, vectors)
            copied += len(memories)
    await _copy_revisions(local, source, targets, ids)
    return copied


async def _copy_revisions(
    local: Local, source: str, targets: Sequence[str], ids: Sequence[str]
) -> None:
    copied = set(ids)
    records: list[tuple[str, str, RevisionKind]] = []
    async for keys in local.stores.objects.pages(replaced_prefix(source)):
        for record in map(parse_revision_key, keys):
            if record is not None and record[0] in copied and record[1] in copied:
                records.append(record)
    for target in targets:
        for old_id, new_id, kind in records:
            await local.stores.objects.put(link_key(target, old_id, new_id, kind), "")


async def plain_cosine(
    local: Local, tenant: str, embeddings: Sequence[list[float]], *, k: int
) -> list[list[str]]:
    """Top-k ids per query straight from VectorStore.query, sorted by similarity."""
    ranked = []
    for embedding in embeddings:
        hits = await local.stores.vectors.query(tenant, embedding, top_k=k)
        hits.sort(key=lambda hit: hit.similarity, reverse=True)
        ranked.append([hit.memory.id for hit in hits])
    return ranked


def fused_twice(hits: list[Hit], scored: KeywordQuery, *, floor: float) -> list[Candidate]:
    """Both legs fused as recall fuses them: once, then again with the first fusion's best as
    the keyword leg's feedback (``recall_candidates``, without its visibility and fetch window:
    every memory here is visible and has its body)."""
    include = [h.memory.id for h in hits]
    keyword = scored.result(top_k=KEYWORD_CANDIDATES, include=include)
    return with_feedback(fuse(hits, keyword, floor=floor), scored, floor=floor)


async def fused_order(
    local: Local, tenant: str, queries: Sequence[str], embeddings: Sequence[list[float]], *, k: int
) -> list[list[str]]:
    """Top-k ids per query by fused relevance alone (the vector's nearest 100 and the keyword
    leg's best 100, fused as recall fuses them: once, then again with the first fusion's best as
    the keyword leg's feedback), with none of recall's gates or tie-breaks: the order the default
    recall may not fall more than 0.01 below (the retrieval targets, ``bench._report``)."""
    ranked = []
    floor = local.ops.floor
    for query, embedding in zip(queries, embeddings, strict=True):
        hits = await local.stores.vectors.query(tenant, embedding, top_k=RECALL_CANDIDATES)
        scored = await local.ops.lexicon.query(tenant, query)
        fused = fused_twice(hits, scored, floor=floor)
        fused.sort(key=lambda c: c.relevance, reverse=True)
        ranked.append([c.memory_id for c in fused[:k]])
    return ranked


@dataclass(frozen=True)
class BacklogRead:
    shards: int
    p50_ms: float
    p95_ms: float


async def counter_reads(local: Local, levels: Sequence[int], *, reads: int) -> list[BacklogRead]:
    """bench/bench_counters.py's cold counter read (a fresh CounterTracker's load: merged.json,
    the shard listing, every shard body above the watermark; no fold triggered) against a
    backlog of unfolded shards written by its ``write_shards``, one tenant per level, sampled
    ``reads`` times for a median and a 95th percentile."""
    from bench.bench_counters import LAG_MS, cold_read_ms, write_shards

    results = []
    for level in levels:
        tenant = f"bench-counters-{level}-{time.time_ns() % 1_000_000}"
        now_ms = time.time_ns() // 1_000_000
        await write_shards(local.stores.objects, tenant, count=level, at_ms=now_ms - 2 * LAG_MS)
        samples = [await cold_read_ms(local.stores.objects, tenant, repeat=1) for _ in range(reads)]
        results.append(
            BacklogRead(
                shards=level,
                p50_ms=round(float(np.percentile(samples, 50)), 2),
                p95_ms=round(float(np.percentile(samples, 95)), 2),
            )
        )
    return results


__all__ = [
    "BacklogRead",
    "Local",
    "copy_tenant",
    "counter_reads",
    "open_local",
    "plain_cosine",
    "preload",
    "wired_local",
]
