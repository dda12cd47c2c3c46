"""kill -9 of a real API in the middle of concurrent remembers, on both backends: the memories it
left half-written are repaired by the compactor's reconcile job once older than the lag, and then
every memory is listed, counted and found by keyword again.

The vector write is held while the remembers are in flight (PostgreSQL: the test locks the
``memories`` table against writes; S3 Vectors: the fake holds PutVectors), so the kill lands
between the index key and the vector every time instead of by luck. Beside those, the store gets
the two shapes older versions or other crash points leave: a vector with no key and no lexicon
entry (0.9 and 0.10 wrote the vector first), and a whole memory whose lexicon shard never landed.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
import signal
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from mcp_types import TextContent

from shared.config import load_config
from shared.counters import COMPACTION_LAG_MS
from shared.lexical.stored import lexicon_documents
from shared.memories.forgetting import record_prefix
from shared.model import Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.storage import Stores, open_stores
from tests.api._process import ApiProcess, clean_env, start
from tests.api.conftest import mcp_session
from tests.fakes.aws import (  # noqa: F401  (S3 server fixtures, registered by import)
    MakeS3Environ,
    make_s3_environ,
    moto_s3_url,
    s3vectors_fake,
    s3vectors_server,
)
from tests.fakes.s3vectors_server import S3VectorsFake

BIN = Path(sys.executable).parent
TENANT = "acme"
HEADERS = {"X-Memory-Tenant": TENANT}
WHOLE = [
    "Releases are cut on Thursdays after the code freeze.",
    "The staging cluster runs in eu-west-1 behind the corporate VPN.",
    "Database migrations are applied with alembic upgrade head before each deploy.",
]
IN_FLIGHT = [
    f"Service number {n} owns the queue named orders-{n} in the billing domain." for n in range(8)
]
NO_LEXICON = "The bastion host for staging is zq-7731.internal, reachable on port 2222."
VECTOR_ONLY = "Feature flags live in the flagd sidecar; the flag file is flags/prod.json."


def unit_vector(dim: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    raw = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def memory_now(content: str) -> Memory:
    now_ms = time.time_ns() // 1_000_000
    return Memory(id=new_ulid(now_ms), tenant=TENANT, content=content, created_at=iso_ms(now_ms))


class VectorHold:
    """Holds every vector write of the backend under test until released."""

    async def hold(self) -> None: ...

    async def release_after_kill(self) -> None: ...


class PostgresHold(VectorHold):
    def __init__(self, url: str) -> None:
        self._url = url
        self._connection: asyncpg.Connection | None = None

    async def hold(self) -> None:
        # EXCLUSIVE blocks INSERT but not SELECT: dedup's query goes on, the vector write waits.
        self._connection = await asyncpg.connect(self._url)
        await self._connection.execute("BEGIN; LOCK TABLE memories IN EXCLUSIVE MODE")

    async def release_after_kill(self) -> None:
        assert self._connection is not None
        # The dead process's statements are still queued behind the lock; ending them is the
        # crash landing before the vector reached the database.
        ended = await self._connection.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND wait_event_type = 'Lock'"
        )
        assert ended >= 1, "no vector write was waiting"
        await self._connection.execute("ROLLBACK")
        await self._connection.close()


class S3VectorsHold(VectorHold):
    def __init__(self, fake: S3VectorsFake) -> None:
        self._fake = fake

    async def hold(self) -> None:
        self._fake.held["PutVectors"] = asyncio.Event()

    async def release_after_kill(self) -> None:
        self._fake.held.pop("PutVectors").set()
        deadline = time.monotonic() + 10
        while self._fake.calls["PutVectors:dropped"] < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert self._fake.calls["PutVectors:dropped"] >= 1, "no vector write was held"


@pytest.fixture
async def s3_environ_384(make_s3_environ: MakeS3Environ) -> dict[str, str]:  # noqa: F811
    """Fresh buckets and an index as wide as the local model's vectors."""
    return await make_s3_environ(dimension=384)


Backend = tuple[dict[str, str], VectorHold]


@pytest.fixture(params=["postgres", "s3"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The environment both processes get, and the hold on the backend's vector writes."""
    return postgres_backend(request) if request.param == "postgres" else s3_backend(request)


def postgres_backend(request: pytest.FixtureRequest) -> Backend:
    url: str = request.getfixturevalue("pg_url")
    return {"DATABASE_URL": url}, PostgresHold(url)


@pytest.fixture
def both_backends(request: pytest.FixtureRequest) -> dict[str, Backend]:
    return {"postgres": postgres_backend(request), "s3": s3_backend(request)}


def s3_backend(request: pytest.FixtureRequest) -> Backend:
    environ: dict[str, str] = request.getfixturevalue("s3_environ_384")
    # The fixtures point this process at the fakes through AWS_* variables; the children
    # need the same ones (clean_env drops every AWS_ variable of the test run).
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    return {**environ, **aws}, S3VectorsHold(request.getfixturevalue("s3vectors_fake"))


async def start_api(environ: dict[str, str]) -> tuple[ApiProcess, str]:
    process = await start(
        [str(BIN / "mcp-memory-api"), "--port", "0"],
        clean_env(EMBEDDING_PROVIDER="local", **environ),
    )
    event = await process.wait_for("listening", timeout_s=60)
    return process, f"http://127.0.0.1:{event['port']}/mcp"


async def remember(url: str, content: str) -> str:
    async with mcp_session(url, headers=HEADERS) as client:
        result = await client.call_tool("remember", {"content": content})
    assert isinstance(result.content[0], TextContent), result
    ids = re.findall(r"\[id:([0-9A-Z]{26})\]", result.content[0].text)
    assert len(ids) == 1, result.content[0].text
    return str(ids[0])


async def call_text(url: str, tool: str, arguments: dict[str, object]) -> str:
    async with mcp_session(url, headers=HEADERS) as client:
        result = await client.call_tool(tool, arguments)
    assert isinstance(result.content[0], TextContent), result
    return result.content[0].text


async def key_ids(stores: Stores) -> set[str]:
    return {key.split("#")[1] for key in await stores.objects.list(index_prefix(TENANT))}


async def vector_ids(stores: Stores) -> set[str]:
    return {
        ref.memory_id
        async for page in stores.vectors.scan_ids()
        for ref in page
        if ref.tenant == TENANT
    }


@pytest.mark.timeout(300)
async def test_kill_9_mid_remember_is_repaired_and_every_memory_listed_counted_and_found(
    both_backends: dict[str, Backend], processes: list[ApiProcess]
) -> None:
    # Each backend's repair waits out the real one-minute lag, so the two run side by side; a
    # failure on one cancels the other and is reported as that backend's.
    async with asyncio.TaskGroup() as running:
        for name, (environ, vector_hold) in both_backends.items():
            running.create_task(named(name, kill_9_mid_remember(environ, vector_hold, processes)))


async def named(backend: str, scenario: Coroutine[Any, Any, None]) -> None:
    try:
        await scenario
    except Exception as failure:
        failure.add_note(f"on {backend}")
        raise


async def kill_9_mid_remember(
    environ: dict[str, str], vector_hold: VectorHold, processes: list[ApiProcess]
) -> None:
    async with open_stores(load_config({**environ, "EMBEDDING_PROVIDER": "local"})) as stores:
        api, url = await start_api(environ)
        processes.append(api)
        for content in WHOLE:
            await remember(url, content)
        # The first recall backfills the tenant's lexicon (merged.json).
        assert "Thursdays" in await call_text(url, "recall", {"query": "When are releases cut?"})

        # What other crash points and older versions leave, written straight to the stores.
        no_lexicon = memory_now(NO_LEXICON)
        await stores.objects.put(index_key(no_lexicon), "")
        await stores.vectors.put(no_lexicon, unit_vector(384, 1))
        vector_only = memory_now(VECTOR_ONLY)
        await stores.vectors.put(vector_only, unit_vector(384, 2))

        await vector_hold.hold()
        in_flight = [asyncio.create_task(remember(url, content)) for content in IN_FLIGHT]
        deadline = time.monotonic() + 60
        while len(await key_ids(stores)) < len(WHOLE) + 1 + len(IN_FLIGHT):
            assert time.monotonic() < deadline, "the remembers never wrote their keys"
            await asyncio.sleep(0.05)
        api.process.send_signal(signal.SIGKILL)
        assert await api.exit_code(timeout_s=30) == -signal.SIGKILL
        await asyncio.gather(*in_flight, return_exceptions=True)
        await vector_hold.release_after_kill()

        keys, vectors = await key_ids(stores), await vector_ids(stores)
        orphan_keys = keys - vectors
        assert len(orphan_keys) == len(IN_FLIGHT), "every in-flight remember left a bare key"
        assert vectors - keys == {vector_only.id}
        killed_at = time.monotonic()

        compactor = await start(
            [str(BIN / "mcp-memory-compactor"), "--metrics-port", "0"],
            clean_env(EMBEDDING_PROVIDER="local", COMPACTOR_RECONCILE_INTERVAL_S="1", **environ),
        )
        processes.append(compactor)
        await compactor.wait_for("listening", timeout_s=60)
        # Nothing is repaired while younger than the lag: it could be a write in flight.
        await asyncio.sleep(5)
        assert await key_ids(stores) == keys
        deadline = killed_at + COMPACTION_LAG_MS / 1000 + 45
        while True:
            keys, vectors = await key_ids(stores), await vector_ids(stores)
            lexicon = await lexicon_documents(stores.objects, TENANT)
            if keys == vectors and lexicon == vectors:
                break
            assert time.monotonic() < deadline, (keys ^ vectors, lexicon)
            await asyncio.sleep(1)
        assert not orphan_keys & keys and vector_only.id in keys
        repairs = [
            e
            for e in compactor.events
            if e.get("event") == "compactor_job" and e.get("job") == "reconcile"
        ]
        assert sum(e["keysDeleted"] for e in repairs) == len(IN_FLIGHT)
        assert sum(e["keysRestored"] for e in repairs) == 1
        assert sum(e["lexiconAdded"] for e in repairs) == 2

        # A restarted API sees every surviving memory through every tool.
        api, url = await start_api(environ)
        processes.append(api)
        listed = await call_text(url, "list_memories", {"limit": 50})
        assert set(re.findall(r"\[id:([0-9A-Z]{26})\]", listed)) == vectors
        stats = await call_text(url, "memory_stats", {})
        assert re.search(rf"\b{len(vectors)} memor", stats), stats
        found = await call_text(url, "recall", {"query": "zq-7731.internal bastion"})
        assert no_lexicon.id in found
        found = await call_text(url, "recall", {"query": "flags/prod.json flagd"})
        assert vector_only.id in found


SCRATCH = [
    f"Scratch note {n}: flaky test number {n} was retried on runner r-{n * 7}." for n in range(12)
]


class ForgetHold:
    """Stops a bulk forget after its vectors are deleted and before its keys are, so that the
    kill lands there every time: the crash point of issue 29's campaign."""

    async def before_forget(self) -> None: ...

    async def once_recorded(self) -> None: ...

    async def release_after_kill(self) -> None: ...


class PostgresForgetHold(ForgetHold):
    def __init__(self, url: str) -> None:
        self._url = url
        self._memories: asyncpg.Connection | None = None
        self._objects: asyncpg.Connection | None = None

    async def before_forget(self) -> None:
        # The vectors' DELETE waits; the record (an INSERT into objects) goes through.
        self._memories = await asyncpg.connect(self._url)
        await self._memories.execute("BEGIN; LOCK TABLE memories IN EXCLUSIVE MODE")

    async def once_recorded(self) -> None:
        # Now the keys wait, and the vectors' DELETE is let through.
        assert self._memories is not None
        self._objects = await asyncpg.connect(self._url)
        await self._objects.execute("BEGIN; LOCK TABLE objects IN EXCLUSIVE MODE")
        await self._memories.execute("ROLLBACK")
        await self._memories.close()

    async def release_after_kill(self) -> None:
        assert self._objects is not None
        await self._objects.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND wait_event_type = 'Lock'"
        )
        await self._objects.execute("ROLLBACK")
        await self._objects.close()


class S3VectorsForgetHold(ForgetHold):
    def __init__(self, fake: S3VectorsFake) -> None:
        self._fake = fake

    async def before_forget(self) -> None:
        # DeleteVectors is applied and its answer held: the API never hears it finished.
        self._fake.held_after["DeleteVectors"] = asyncio.Event()

    async def release_after_kill(self) -> None:
        self._fake.held_after.pop("DeleteVectors").set()


@pytest.fixture(params=["postgres", "s3"])
def forget_backend(request: pytest.FixtureRequest) -> tuple[dict[str, str], ForgetHold]:
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
        return {"DATABASE_URL": url}, PostgresForgetHold(url)
    environ: dict[str, str] = request.getfixturevalue("s3_environ_384")
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    return {**environ, **aws}, S3VectorsForgetHold(request.getfixturevalue("s3vectors_fake"))


async def forget_scratch(url: str, *, confirm: bool) -> dict[str, object]:
    async with mcp_session(url, headers=HEADERS) as client:
        result = await client.call_tool(
            "forget", {"filter": {"category": "scratch"}, "confirm": confirm}
        )
    assert not result.is_error and result.structured_content is not None, result
    return dict(result.structured_content)


@pytest.mark.timeout(300)
async def test_kill_9_mid_bulk_forget_leaves_stats_list_and_forget_in_agreement_after_restart(
    forget_backend: tuple[dict[str, str], ForgetHold], processes: list[ApiProcess]
) -> None:
    """Issue 29: killed between a bulk forget's vectors and its keys, with no compactor, a
    restarted API said 1,020 memories in stats while listing 20, and the same forget run again
    matched none of the leftover keys. Now the forget's record (shared.memories.forgetting) is
    read by every reader: what it names is gone at once, and it is finished once older than the
    lag."""
    environ, hold = forget_backend
    async with open_stores(load_config({**environ, "EMBEDDING_PROVIDER": "local"})) as stores:
        api, url = await start_api(environ)
        processes.append(api)
        async with mcp_session(url, headers=HEADERS) as client:
            for content in SCRATCH:
                await client.call_tool("remember", {"content": content, "category": "scratch"})
        kept = {await remember(url, content) for content in WHOLE}
        assert len(await key_ids(stores)) == len(SCRATCH) + len(WHOLE)

        await hold.before_forget()
        forgetting = asyncio.create_task(forget_scratch(url, confirm=True))
        deadline = time.monotonic() + 60
        while not await stores.objects.list(record_prefix(TENANT)):
            assert time.monotonic() < deadline, "the forget never recorded itself"
            await asyncio.sleep(0.05)
        await hold.once_recorded()
        while await vector_ids(stores) != kept:
            assert time.monotonic() < deadline, "the forget never deleted the vectors"
            await asyncio.sleep(0.05)
        api.process.send_signal(signal.SIGKILL)
        assert await api.exit_code(timeout_s=30) == -signal.SIGKILL
        await asyncio.gather(forgetting, return_exceptions=True)
        await hold.release_after_kill()
        # The campaign's state: every key left, the scratch vectors gone.
        assert len(await key_ids(stores)) == len(SCRATCH) + len(WHOLE)
        assert await vector_ids(stores) == kept

        api, url = await start_api(environ)
        processes.append(api)
        stats = await call_text(url, "memory_stats", {})
        assert re.search(rf"\b{len(WHOLE)} memor", stats), stats
        listed = await call_text(url, "list_memories", {"limit": 50})
        assert set(re.findall(r"\[id:([0-9A-Z]{26})\]", listed)) == kept
        assert (await forget_scratch(url, confirm=False))["matched"] == 0
