"""Embedded PostgreSQL: start-up time, and exact-scan recall time as one tenant grows.

    python bench/bench_storage.py [--sizes 1000,10000,100000] [--queries 50] [--dim 384]

Prints the cold start (fresh data dir: initdb + start + schema, to the first answered query),
the warm start (same dir, server stopped in between), and for each tenant size the p50/p95 of
``VectorStore.query`` with ``top_k=100`` over random unit vectors, through the same code the
service runs: once scanning in SQL (``PG_SCAN_CACHE_MB=0``) and once from the tenant's
in-process snapshot, with the time a full snapshot read takes. Rows are bulk-loaded with COPY
so that 100k takes seconds, not minutes. Besides wall time it prints the load average: on a
shared 2-core machine wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import asyncpg
import numpy as np
from pgvector.asyncpg import register_vector

from shared.config import load_config
from shared.model import Memory, new_ulid
from shared.storage import Stores, open_stores, to_metadata
from shared.storage.postgres.embedded import embedded_database
from shared.storage.postgres.scan import ScanCache

TENANT = "bench"
TOP_K = 100
LOAD_CHUNK = 10_000


def _unit_vectors(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


async def _first_query(data_dir: Path, dim: int) -> float:
    started = time.perf_counter()
    async with open_stores(load_config({}, local=True, data_dir=data_dir)) as stores:
        await stores.vectors.query(TENANT, [1.0] + [0.0] * (dim - 1), top_k=TOP_K)
        return time.perf_counter() - started


async def _load(url: str, *, start: int, stop: int, dim: int, rng: np.random.Generator) -> None:
    connection = await asyncpg.connect(url)
    try:
        await register_vector(connection)
        for low in range(start, stop, LOAD_CHUNK):
            high = min(stop, low + LOAD_CHUNK)
            vectors = _unit_vectors(rng, high - low, dim)
            records = []
            for offset, vector in enumerate(vectors):
                memory = Memory(
                    id=new_ulid(1_700_000_000_000 + low + offset),
                    tenant=TENANT,
                    content=f"benchmark memory number {low + offset} about nothing in particular",
                    created_at="2026-01-01T00:00:00.000Z",
                )
                metadata = json.dumps(to_metadata(memory), ensure_ascii=False)
                records.append((TENANT, memory.id, vector, metadata))
            await connection.copy_records_to_table(
                "memories", records=records, columns=["tenant_id", "id", "embedding", "metadata"]
            )
        await connection.execute("ANALYZE memories")
    finally:
        await connection.close()


async def _time_queries(stores: Stores, *, queries: int, dim: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    timings_ms = []
    for vector in _unit_vectors(rng, queries, dim):
        started = time.perf_counter()
        hits = await stores.vectors.query(TENANT, vector.tolist(), top_k=TOP_K)
        timings_ms.append((time.perf_counter() - started) * 1000)
        assert len(hits) == TOP_K
    return timings_ms


def _p(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main(sizes: list[int], queries: int, dim: int) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    data_dir = Path(tempfile.mkdtemp(prefix="mcp-memory-bench-"))
    try:
        cold_s = await _first_query(data_dir, dim)
        warm_s = await _first_query(data_dir, dim)
        print(f"embedded cold start (fresh dir → first query): {cold_s * 1000:7.0f} ms")
        print(f"embedded warm start (existing dir → first query): {warm_s * 1000:6.0f} ms")

        rng = np.random.default_rng(7)
        config = load_config({}, local=True, data_dir=data_dir)
        uncached_config = load_config({"PG_SCAN_CACHE_MB": "0"}, local=True, data_dir=data_dir)
        async with (
            embedded_database(data_dir) as url,
            open_stores(config) as stores,
            open_stores(uncached_config) as sql_only,
        ):
            assert isinstance(stores.snapshots, ScanCache)
            cache = stores.snapshots
            print(f"\nquery, one tenant, {dim}-d, top_k={TOP_K}, {queries} queries")
            print(
                f"{'memories':>9} {'load s':>7} {'sql p50':>8} {'sql p95':>8} "
                f"{'snapshot read ms':>17} {'snap p50':>9} {'snap p95':>9}"
            )
            loaded = 0
            for size in sizes:
                started = time.perf_counter()
                await _load(url, start=loaded, stop=size, dim=dim, rng=rng)
                load_s = time.perf_counter() - started
                loaded = size
                await _time_queries(sql_only, queries=3, dim=dim, seed=1)  # warm the buffers
                sql = await _time_queries(sql_only, queries=queries, dim=dim, seed=size)
                started = time.perf_counter()
                snapshot = await cache.refresh(TENANT)
                read_ms = (time.perf_counter() - started) * 1000
                assert snapshot is not None, "the tenant does not fit PG_SCAN_CACHE_MB"
                hits_before = cache.stats.hits
                snap = await _time_queries(stores, queries=queries, dim=dim, seed=size)
                assert cache.stats.hits - hits_before == queries
                print(
                    f"{size:>9} {load_s:>7.1f} {statistics.median(sql):>8.1f} "
                    f"{_p(sql, 0.95):>8.1f} {read_ms:>17.0f} {statistics.median(snap):>9.2f} "
                    f"{_p(snap, 0.95):>9.2f}"
                )
        print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    asyncio.run(main([int(s) for s in args.sizes.split(",")], args.queries, args.dim))
