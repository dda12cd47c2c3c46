"""Latency through the S3 path against the local servers: what our code adds on top of the wire.

Starts moto's S3 server and the S3 Vectors fake in-process, opens the stores exactly as the
service does (``open_stores``), and times each store operation. For comparison it also times the
same calls made directly with the aiobotocore client, so the difference is our own code (codec,
budget check, tenant re-check, error translation). Run::

    python bench/bench_s3.py [--n 200] [--dim 1024] [--preload 1000]

These are loopback numbers against fakes, not AWS latencies: moto in particular is slow (about
10-30 ms per request) and dominates the S3 rows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moto.server import ThreadedMotoServer

from bench._inproc import wired_local
from shared.config import load_config
from shared.embedding import open_embedder
from shared.model import Draft, Memory, iso_ms, new_ulid
from shared.operations import recall as recalling
from shared.operations import remember as remembering
from shared.storage import open_stores, to_metadata, vector_key
from tests.fakes.aws import create_s3_backend
from tests.fakes.s3vectors_server import S3VectorsFake

NOW_MS = 1_790_000_000_000


def _vector(i: int, dim: int) -> list[float]:
    return [((i * 31 + j * 17) % 97) / 97 - 0.5 for j in range(dim)]


async def _time(n: int, call: Callable[[int], Awaitable[object]]) -> list[float]:
    samples = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _row(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{name:<34} p50 {statistics.median(ordered):7.2f} ms   p95 {p95:7.2f} ms"


def _memory(i: int) -> Memory:
    return Memory(
        id=new_ulid(NOW_MS + i),
        tenant="bench",
        content=f"benchmark memory number {i}: deploy with make deploy after CI passes",
        category="convention",
        tags=("bench", "deploy"),
        created_at=iso_ms(NOW_MS + i),
    )


async def main(*, n: int, dim: int, preload: int) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        os.environ.pop(name, None)
    os.environ.update(
        AWS_ACCESS_KEY_ID="AKIAFAKEFORBENCH0000",
        AWS_SECRET_ACCESS_KEY="fake-secret-for-bench",
        AWS_CONFIG_FILE="/nonexistent/aws-config",
        AWS_SHARED_CREDENTIALS_FILE="/nonexistent/aws-credentials",
        AWS_EC2_METADATA_DISABLED="true",
    )
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    s3_url = f"http://{host}:{port}"
    fake = S3VectorsFake()
    s3vectors_url = await fake.start()
    os.environ["AWS_ENDPOINT_URL_S3"] = s3_url
    os.environ["AWS_ENDPOINT_URL_S3VECTORS"] = s3vectors_url
    await create_s3_backend(
        s3_url=s3_url,
        s3vectors_url=s3vectors_url,
        vector_bucket="bench-vectors",
        state_bucket="bench-state",
        dimension=dim,
    )
    config = load_config(
        {
            "VECTOR_BUCKET": "bench-vectors",
            "STATE_BUCKET": "bench-state",
            "EMBEDDING_DIM": str(dim),
            "AWS_REGION": "us-east-1",
        }
    )
    started = time.perf_counter()
    async with open_stores(config) as stores:
        open_ms = (time.perf_counter() - started) * 1000
        vectors, objects = stores.vectors, stores.objects
        client = vectors._client  # type: ignore[attr-defined]  # the raw baseline below
        s3 = objects._client  # type: ignore[attr-defined]
        for i in range(preload):
            await vectors.put(_memory(10_000 + i), _vector(10_000 + i, dim))
        memories = [_memory(i) for i in range(n)]
        rows = [f"open_stores (GetIndex + HeadBucket)  {open_ms:.1f} ms"]

        async def raw_put(i: int) -> None:
            await client.put_vectors(
                vectorBucketName="bench-vectors",
                indexName="memories",
                vectors=[
                    {
                        "key": vector_key("raw", memories[i].id),
                        "data": {"float32": _vector(i, dim)},
                        "metadata": {**to_metadata(memories[i]), "tenantId": "raw"},
                    }
                ],
            )

        async def raw_query(i: int) -> None:
            await client.query_vectors(
                vectorBucketName="bench-vectors",
                indexName="memories",
                topK=100,
                queryVector={"float32": _vector(i, dim)},
                filter={"tenantId": "bench"},
                returnMetadata=True,
                returnDistance=True,
            )

        rows.append(
            _row(
                "vector put (store)",
                await _time(n, lambda i: vectors.put(memories[i], _vector(i, dim))),
            )
        )
        rows.append(_row("vector put (raw client)", await _time(n, raw_put)))
        rows.append(
            _row(
                f"vector query top-100 of {preload + n} (store)",
                await _time(n, lambda i: vectors.query("bench", _vector(i, dim), top_k=100)),
            )
        )
        rows.append(_row(f"vector query top-100 of {preload + n} (raw)", await _time(n, raw_query)))
        rows.append(
            _row(
                "vector get 50 ids (store)",
                await _time(n, lambda i: vectors.get("bench", [m.id for m in memories[:50]])),
            )
        )
        rows.append(
            _row(
                "state put (store)",
                await _time(n, lambda i: objects.put(f"stats/bench/shard/{i:06d}.json", '{"a":1}')),
            )
        )
        rows.append(
            _row(
                "state put (raw client)",
                await _time(
                    n,
                    lambda i: s3.put_object(
                        Bucket="bench-state", Key=f"raw/{i:06d}", Body=b'{"a":1}'
                    ),
                ),
            )
        )
        rows.append(
            _row(
                "state get (store)",
                await _time(n, lambda i: objects.get(f"stats/bench/shard/{i:06d}.json")),
            )
        )
        rows.append(
            _row(
                f"state list {n} keys (store)",
                await _time(max(5, n // 10), lambda i: objects.list("stats/bench/shard/")),
            )
        )
    rows.extend(await _service_rows(n=n, s3_url=s3_url, s3vectors_url=s3vectors_url))
    await fake.close()
    moto.stop()
    print(f"S3 path against local servers: n={n}, dim={dim}, preloaded vectors={preload}")
    print("\n".join(rows))


async def _service_rows(*, n: int, s3_url: str, s3vectors_url: str) -> list[str]:
    """remember and recall through ``shared.operations`` on the S3 stores with the local model,
    beside the embedding alone: the rest is the store round trips plus our own code."""
    await create_s3_backend(
        s3_url=s3_url,
        s3vectors_url=s3vectors_url,
        vector_bucket="bench-service-vectors",
        state_bucket="bench-service-state",
        dimension=384,
    )
    environ = {
        "VECTOR_BUCKET": "bench-service-vectors",
        "STATE_BUCKET": "bench-service-state",
        "AWS_REGION": "us-east-1",
        "EMBEDDING_PROVIDER": "local",
    }
    config = load_config(environ)
    facts = [
        f"Service {i} is deployed with make deploy-{i} and listens on port {3000 + i}."
        for i in range(n)
    ]
    questions = [f"How is service {i} deployed?" for i in range(n)]
    async with open_stores(config) as stores, open_embedder(config) as embedder:
        # Each question is asked once: that no scored question is kept changes nothing here.
        ops = wired_local(config, stores, embedder).ops

        async def remember(i: int) -> None:
            await remembering.remember(
                ops,
                "bench",
                None,
                Draft(
                    content=facts[i],
                    memory_type="project",
                    category=None,
                    tags=(),
                    scope="project",
                ),
            )

        async def recall(i: int) -> None:
            await recalling.recall(ops, "bench", None, query=questions[i], mode="balanced", limit=5)

        return [
            _row(
                "embed one text (local model)", await _time(n, lambda i: embedder.embed(facts[i]))
            ),
            _row("remember (service, S3 stores)", await _time(n, remember)),
            _row(f"recall of {n} (service, S3 stores)", await _time(n, recall)),
        ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--preload", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(n=args.n, dim=args.dim, preload=args.preload))
