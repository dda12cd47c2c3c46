"""The keyword probe: identifiers planted among thousands of memories of the same technical
domain, each then asked for by the identifier alone.

Every memory is a developer's note of the same shapes (error codes, file paths, flags, versions,
ticket ids), so the planted identifiers sit among thousands that look like them: ``E4821`` among
other ``E`` codes, ``src/ledger/sync_batch.py`` among other paths of the same folders. A planted
memory counts as found when it is among the first three results of a default recall.

PostgreSQL: the distractors are preloaded in-process (vector and index key, as 0.9.0 wrote them:
the API's keyword leg backfills them on its first recall), the planted memories are remembered
over HTTP, and every query goes through the recall tool over MCP. S3 (moto's S3 server and the
S3 Vectors fake, in this process): the same memories through the stores and the same
operations the API runs (``shared.operations``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from bench._client import call_text, ids_in, parse_recall, session
from bench._inproc import EMBED_BATCH, Local
from bench._server import ApiServer
from shared.model import Draft, Memory, index_key, iso_ms, new_ulid

PROBE_TENANT: Final = "probe"
PLANTED_PER_KIND: Final = 10
FOUND_WITHIN: Final = 3
PUT_CONCURRENCY: Final = 16

_COMPONENTS: Final = (
    "billing", "auth", "ledger", "search", "gateway", "scheduler", "ingest", "notifier",
    "reports", "webhooks", "cache", "exporter", "payments", "catalog", "inventory", "mailer",
)  # fmt: skip
_MODULES: Final = ("sync", "batch", "client", "worker", "retry", "export", "index", "store")
# 20 x 20 x 16 = 6,400 distinct flags: room for one in five of 10,000 memories and the planted.
_WORDS: Final = (
    "dry", "run", "remote", "force", "drain", "skip", "fast", "safe", "local", "all",
    "no", "keep", "wait", "quiet", "strict", "lazy", "full", "partial", "retry", "cold",
)  # fmt: skip
_LIBRARIES: Final = ("psycopg", "redis-py", "celery", "boto3", "pydantic", "fastapi", "httpx")
_PROJECTS: Final = ("OPS", "BILL", "PLAT", "SEC", "DATA")
_DEPENDENCIES: Final = ("database", "broker", "object store", "search cluster", "token service")


@dataclass(frozen=True)
class Planted:
    identifier: str
    content: str


class _Identifiers:
    """Random identifiers of each kind, never the same one twice."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def _fresh(self, make: Any) -> str:
        while True:
            value = str(make())
            if value not in self._used:
                self._used.add(value)
                return value

    def code(self) -> str:
        return self._fresh(lambda: f"E{self._rng.randrange(1000, 10000)}")

    def path(self) -> str:
        r = self._rng
        return self._fresh(
            lambda: (
                f"src/{r.choice(_COMPONENTS)}/{r.choice(_MODULES)}_{r.choice(_MODULES)}"
                f"{r.randrange(100)}.py"
            )
        )

    def flag(self) -> str:
        r = self._rng
        return self._fresh(
            lambda: f"--{r.choice(_WORDS)}-{r.choice(_WORDS)}-{r.choice(_COMPONENTS)}"
        )

    def version(self) -> str:
        r = self._rng
        return self._fresh(lambda: f"{r.randrange(1, 9)}.{r.randrange(40)}.{r.randrange(30)}")

    def ticket(self) -> str:
        r = self._rng
        return self._fresh(lambda: f"{r.choice(_PROJECTS)}-{r.randrange(1000, 10000)}")


def _sentence(kind: str, value: str, rng: random.Random) -> str:
    component = rng.choice(_COMPONENTS)
    other = rng.choice(_COMPONENTS)
    dependency = rng.choice(_DEPENDENCIES)
    seconds = rng.randrange(2, 120)
    if kind == "code":
        return (
            f"The {component} service fails with error {value} when the {dependency} "
            f"connection pool is exhausted; restarting the {component} worker clears it."
        )
    if kind == "path":
        return (
            f"The retry loop for {component} lives in {value}; it waits {seconds} seconds "
            f"between attempts before handing the job back to {other}."
        )
    if kind == "flag":
        return (
            f"Run the {component} migration with {value} before deploying {other}, otherwise "
            f"the {dependency} schema change is skipped."
        )
    if kind == "version":
        return (
            f"We pinned {rng.choice(_LIBRARIES)} to {value} because the next release broke "
            f"the {component} build on CI."
        )
    return (
        f"Ticket {value} tracks the {component} timeout of {seconds} seconds against the "
        f"{dependency}; {other} sees the same symptom."
    )


KINDS: Final = ("code", "path", "flag", "version", "ticket")


def probe_corpus(distractors: int, *, seed: int = 15) -> tuple[list[str], list[Planted]]:
    """``distractors`` memories and ``PLANTED_PER_KIND`` planted ones of each kind."""
    rng = random.Random(seed)
    ids = _Identifiers(rng)
    texts = []
    for i in range(distractors):
        kind = KINDS[i % len(KINDS)]
        texts.append(_sentence(kind, getattr(ids, kind)(), rng))
    planted = []
    for kind in KINDS:
        for _ in range(PLANTED_PER_KIND):
            value = getattr(ids, kind)()
            planted.append(Planted(value, _sentence(kind, value, rng)))
    return texts, planted


async def _store(
    vectors: Any, objects: Any, tenant: str, texts: Sequence[str], embedded: Sequence[list[float]]
) -> None:
    gate = asyncio.Semaphore(PUT_CONCURRENCY)

    async def one(text: str, vector: list[float]) -> None:
        now_ms = time.time_ns() // 1_000_000
        memory = Memory(id=new_ulid(now_ms), tenant=tenant, content=text, created_at=iso_ms(now_ms))
        async with gate:
            await vectors.put(memory, vector)
            await objects.put(index_key(memory), "")

    await asyncio.gather(*(one(t, v) for t, v in zip(texts, embedded, strict=True)))


def _score(
    planted: Sequence[Planted], answers: Sequence[tuple[list[str], str]], ids: dict[str, str]
) -> dict[str, Any]:
    """``answers[i]``: the ids recall returned for planted[i], and its confidence."""
    found = [
        ids[p.identifier] in returned[:FOUND_WITHIN]
        for p, (returned, _) in zip(planted, answers, strict=True)
    ]
    first = [
        bool(returned) and returned[0] == ids[p.identifier]
        for p, (returned, _) in zip(planted, answers, strict=True)
    ]
    high = [conf == "high" for _, conf in answers]
    return {
        "planted": len(planted),
        f"found_in_top_{FOUND_WITHIN}": sum(found),
        "found_first": sum(first),
        "high_and_first": sum(h and f for h, f in zip(high, first, strict=True)),
        # probe_corpus plants PLANTED_PER_KIND of each kind, in KINDS order.
        "by_kind": {
            kind: sum(found[i * PLANTED_PER_KIND : (i + 1) * PLANTED_PER_KIND])
            for i, kind in enumerate(KINDS)
        },
        "missed": [p.identifier for p, f in zip(planted, found, strict=True) if not f],
        "confidence": {
            c: sum(conf == c for _, conf in answers) for c in sorted({c for _, c in answers})
        },
    }


async def _postgres(
    local: Local, server: ApiServer, texts: list[str], embedded: list[list[float]],
    planted: list[Planted], log: Any,
) -> dict[str, Any]:  # fmt: skip
    log(f"probe/postgres: preloading {len(texts)} memories in-process")
    await _store(local.stores.vectors, local.stores.objects, PROBE_TENANT, texts, embedded)
    ids: dict[str, str] = {}
    answers: list[tuple[list[str], str]] = []
    async with session(server.url, PROBE_TENANT) as client:
        for p in planted:
            text = await call_text(client, "remember", {"content": p.content})
            ids[p.identifier] = ids_in(text)[0]
        log("probe/postgres: asking for each planted identifier over MCP")
        started = time.perf_counter()
        for p in planted:
            recalled = parse_recall(await call_text(client, "recall", {"query": p.identifier}))
            answers.append((recalled.ids, recalled.confidence))
        elapsed = time.perf_counter() - started
    return _score(planted, answers, ids) | {"seconds": round(elapsed, 2)}


async def _s3(
    local: Local, texts: list[str], embedded: list[list[float]], planted: list[Planted], log: Any
) -> dict[str, Any]:
    from moto.server import ThreadedMotoServer

    from shared.config import load_config
    from shared.counters import CounterTracker
    from shared.lexical import Lexicon
    from shared.model import wall_clock_ms
    from shared.operations import operations_context
    from shared.operations.recall import recall
    from shared.operations.remember import remember
    from shared.revisions import ReplacementLog
    from shared.storage import open_stores
    from tests.fakes.aws import create_s3_backend
    from tests.fakes.s3vectors_server import S3VectorsFake

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto logs every request otherwise
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    fake = S3VectorsFake()
    try:
        host, port = moto.get_host_and_port()
        s3_url = f"http://{host}:{port}"
        vectors_url = await fake.start()
        # The SDK reads endpoints and credentials from the process environment, as in a pod.
        for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
            os.environ.pop(name, None)
        os.environ.update(
            AWS_ACCESS_KEY_ID="AKIAFAKEFORBENCH0000",
            AWS_SECRET_ACCESS_KEY="fake-secret-for-bench",
            AWS_CONFIG_FILE="/nonexistent/aws-config",
            AWS_SHARED_CREDENTIALS_FILE="/nonexistent/aws-credentials",
            AWS_EC2_METADATA_DISABLED="true",
            AWS_ENDPOINT_URL_S3=s3_url,
            AWS_ENDPOINT_URL_S3VECTORS=vectors_url,
        )
        await create_s3_backend(
            s3_url=s3_url,
            s3vectors_url=vectors_url,
            vector_bucket="probe-vectors",
            state_bucket="probe-state",
            dimension=local.embedder.dim,
        )
        config = load_config(
            {
                "VECTOR_BUCKET": "probe-vectors",
                "STATE_BUCKET": "probe-state",
                "AWS_REGION": "us-east-1",
                "EMBEDDING_PROVIDER": "local",
            }
        )
        async with open_stores(config) as stores:
            log(f"probe/s3: preloading {len(texts)} memories over HTTP to moto and the fake")
            await _store(stores.vectors, stores.objects, PROBE_TENANT, texts, embedded)
            ops = operations_context(
                vectors=stores.vectors,
                objects=stores.objects,
                embedder=local.embedder,
                counters=CounterTracker(stores.objects, process_id="probe", compact_threshold=20),
                lexicon=Lexicon(
                    stores.objects, stores.vectors, process_id="probe", clock_ms=wall_clock_ms
                ),
                replacements=ReplacementLog(stores.objects, clock_ms=wall_clock_ms),
                snapshots=stores.snapshots,
                floor=config.recall.min_similarity,
                high_similarity=config.recall.high_similarity,
            )
            ids: dict[str, str] = {}
            for p in planted:
                stored = await remember(ops,
                    PROBE_TENANT, None, Draft(content=p.content, memory_type="project",
                    category=None, tags=(), scope="project"),
                )  # fmt: skip
                ids[p.identifier] = stored.memory.id
            log("probe/s3: asking for each planted identifier through shared.operations")
            answers: list[tuple[list[str], str]] = []
            started = time.perf_counter()
            for p in planted:
                answer = await recall(
                    ops, PROBE_TENANT, None, query=p.identifier, mode="balanced", limit=5
                )
                outcome = answer.outcome
                returned = [r.memory.id for r in outcome.results] if outcome else []
                answers.append((returned, outcome.confidence if outcome else "no_match"))
            elapsed = time.perf_counter() - started
            await ops.lexicon.close()
        return _score(planted, answers, ids) | {"seconds": round(elapsed, 2)}
    finally:
        await fake.close()
        moto.stop()


async def run_probe(local: Local, server: ApiServer, plan: Any, log: Any) -> dict[str, Any]:
    texts, planted = probe_corpus(plan.probe_memories)
    log(f"probe: embedding {len(texts)} distractors")
    embedded: list[list[float]] = []
    for start in range(0, len(texts), EMBED_BATCH):
        embedded += await local.embedder.embed_many(texts[start : start + EMBED_BATCH])
    return {
        "distractors": len(texts),
        "postgres": await _postgres(local, server, texts, embedded, planted, log),
        "s3": await _s3(local, texts, embedded, planted, log),
    }


__all__ = ["KINDS", "Planted", "probe_corpus", "run_probe"]
