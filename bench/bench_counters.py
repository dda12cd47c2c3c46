"""Counter read and fold costs on the embedded PostgreSQL (a script, not a test).

    python bench/bench_counters.py [--data-dir DIR] [--repeat N]

Prints, for a backlog of 0, 100 and 1,000 shards (10 memories each), the median time of a
counter read with a cold cache, then the fold throughput in shards per second.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from shared.config import load_config
from shared.counters import COUNTER_LAYOUT, COUNTER_LOG, CounterTracker, encode_shard
from shared.model.counters import AccessCount
from shared.model.ids import iso_ms, new_ulid
from shared.storage import ObjectStore, open_stores
from shared.storage.shardlog import shard_name

LAG_MS = 60_000
MEMORIES_PER_SHARD = 10


async def write_shards(objects: ObjectStore, tenant: str, *, count: int, at_ms: int) -> None:
    body = encode_shard(
        {
            f"mem{i:04d}": AccessCount(access=1, last_at=iso_ms(at_ms))
            for i in range(MEMORIES_PER_SHARD)
        }
    )
    for start in range(0, count, 50):
        await asyncio.gather(
            *(
                objects.put(
                    COUNTER_LAYOUT.shard_key(tenant, shard_name(new_ulid(at_ms), f"bench{i}")), body
                )
                for i in range(start, min(count, start + 50))
            )
        )


async def cold_read_ms(objects: ObjectStore, tenant: str, *, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        # A fresh tracker each time: the cache is cold, and no fold is triggered.
        tracker = CounterTracker(objects, process_id="bench", compact_threshold=10**9)
        started = time.perf_counter()
        await tracker.load(tenant)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def main(data_dir: Path, repeat: int) -> None:
    config = load_config({}, local=True, data_dir=data_dir)
    async with open_stores(config) as stores:
        objects = stores.objects
        now_ms = time.time_ns() // 1_000_000
        print(f"store: {stores.description}")
        print(f"counter read, cold cache (median of {repeat}):")
        for backlog in (0, 100, 1_000):
            tenant = f"read{backlog}"
            await write_shards(objects, tenant, count=backlog, at_ms=now_ms - 2 * LAG_MS)
            ms = await cold_read_ms(objects, tenant, repeat=repeat)
            print(f"  backlog {backlog:>5} shards: {ms:8.1f} ms")
        print("fold throughput:")
        for backlog in (100, 1_000, 5_000):
            tenant = f"fold{backlog}"
            await write_shards(objects, tenant, count=backlog, at_ms=now_ms - 2 * LAG_MS)
            started = time.perf_counter()
            result = await COUNTER_LOG.fold(objects, tenant, now_ms=now_ms, lag_ms=LAG_MS)
            seconds = time.perf_counter() - started
            assert result.shards_folded == backlog, result
            print(
                f"  {backlog:>5} shards folded and deleted in {seconds:6.2f} s: "
                f"{backlog / seconds:8.0f} shards/s"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if args.data_dir is None:
        with tempfile.TemporaryDirectory(prefix="bench-counters-") as tmp:
            asyncio.run(main(Path(tmp), args.repeat))
    else:
        asyncio.run(main(args.data_dir, args.repeat))
