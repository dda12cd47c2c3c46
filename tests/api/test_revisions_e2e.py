"""Corrections, expiry and bulk forget end to end: the official MCP client over real HTTP, a
real API server per backend (PostgreSQL, then S3 through moto and the S3 Vectors fake), the
local model, and a settable clock. "Another process" is a second OperationsContext opened on the
same store with its own caches (one process can serve only one API: its metrics registry is
global), reading the same clock."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import time
from collections.abc import AsyncIterator, Mapping

import msgspec
import pytest
from aiohttp import web

from services.api.http.app import build_app
from services.api.runtime import open_runtime
from shared.config import Config, load_config
from shared.counters import CounterTracker
from shared.embedding import Embedder, open_embedder
from shared.lexical import Lexicon
from shared.memories.listing import ListFilter
from shared.memories.selection import BULK_FORGET_BATCH
from shared.model import Memory, index_key, iso_ms, new_ulid
from shared.model.keys import replaced_key
from shared.operations import OperationsContext, operations_context
from shared.operations.browse import list_page, stats
from shared.operations.recall import recall
from shared.revisions import DEFAULT_CACHE_TTL_MS, ReplacementLog
from shared.storage import Stores, open_stores
from tests.api.test_tools_e2e import call, ids_in, postgres_environ, s3_environ, text_of
from tests.fakes.aws import point_aws_at

DAY_MS = 86_400_000
PORT_OLD = "The staging API server listens on port 8080."
PORT_NEW = "The staging API server listens on port 8443."
PORT_QUERY = "Which port does the staging API server listen on?"


class Clock:
    """Real time plus an offset the tests move forward."""

    def __init__(self) -> None:
        self.offset_ms = 0

    def __call__(self) -> int:
        return time.time_ns() // 1_000_000 + self.offset_ms

    def advance(self, ms: int) -> None:
        self.offset_ms += ms


class Servers(msgspec.Struct, frozen=True):
    first: str
    clock: Clock
    storage: dict[str, str]
    # moto's and the S3 Vectors fake's URLs, on S3: each test's environment is cleared.
    aws: tuple[str, str] | None


@contextlib.asynccontextmanager
async def same_stores(servers: Servers) -> AsyncIterator[tuple[Config, Stores]]:
    """The server's store, opened again in the test (each test's environment is cleared)."""
    config = load_config({**servers.storage, "EMBEDDING_PROVIDER": "local"})
    with pytest.MonkeyPatch.context() as monkeypatch:
        if servers.aws is not None:
            point_aws_at(monkeypatch, s3_url=servers.aws[0], s3vectors_url=servers.aws[1])
        async with open_stores(config) as stores:
            yield config, stores


@contextlib.asynccontextmanager
async def second_process(servers: Servers) -> AsyncIterator[OperationsContext]:
    """Another API's service on the same store: nothing shared but the store and the clock."""
    async with same_stores(servers) as (config, stores), open_embedder(config) as embedder:
        yield _service(config, stores, embedder, servers.clock)


def _service(config: Config, stores: Stores, embedder: Embedder, clock: Clock) -> OperationsContext:
    return operations_context(
        vectors=stores.vectors,
        objects=stores.objects,
        embedder=embedder,
        counters=CounterTracker(
            stores.objects, process_id="second", compact_threshold=20, clock_ms=clock
        ),
        lexicon=Lexicon(stores.objects, stores.vectors, process_id="second", clock_ms=clock),
        replacements=ReplacementLog(stores.objects, clock_ms=clock),
        floor=config.recall.min_similarity,
        high_similarity=config.recall.high_similarity,
        clock_ms=clock,
    )


@pytest.fixture(scope="module", params=["postgres", "s3"])
async def servers(
    request: pytest.FixtureRequest,
    pg_server_url: str,
    moto_s3_url: str,
    s3vectors_server: tuple[object, str],
) -> AsyncIterator[Servers]:
    environ = (
        postgres_environ(pg_server_url)
        if request.param == "postgres"
        else s3_environ(moto_s3_url, s3vectors_server[1])
    )
    clock = Clock()
    async with environ as storage:
        config = load_config({**storage, "EMBEDDING_PROVIDER": "local"})
        app = build_app(config, open_runtime=functools.partial(open_runtime, clock_ms=clock))
        runner = web.AppRunner(app, shutdown_timeout=5)
        await runner.setup()
        try:
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            url = f"http://127.0.0.1:{runner.addresses[0][1]}/mcp"
            aws = None if request.param == "postgres" else (moto_s3_url, s3vectors_server[1])
            yield Servers(url, clock, dict(storage), aws)
        finally:
            await runner.cleanup()


@pytest.fixture
def headers(request: pytest.FixtureRequest) -> dict[str, str]:
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]
    return {"X-Memory-Tenant": f"r-{digest}"}


async def tool(
    url: str, name: str, arguments: Mapping[str, object], headers: dict[str, str]
) -> str:
    result = await call(url, name, arguments, headers=headers)
    text = text_of(result)
    assert not result.is_error, text
    return text


async def refused(
    url: str, name: str, arguments: Mapping[str, object], headers: dict[str, str]
) -> str:
    result = await call(url, name, arguments, headers=headers)
    text = text_of(result)
    assert result.is_error, text
    return text


async def stored(url: str, headers: dict[str, str], content: str, **extra: object) -> str:
    text = await tool(url, "remember", {"content": content, **extra}, headers)
    assert text.startswith("[MEMORY] Stored as "), text
    return ids_in(text)[0]


async def test_a_replaced_memory_leaves_recall_list_stats_and_dedup(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, PORT_OLD)
    text = await tool(url, "remember", {"content": PORT_NEW, "replaces": old}, headers)
    new = ids_in(text)[0]
    assert f"It replaces {old}" in text and "retired" in text
    recalled = await tool(url, "recall", {"query": PORT_QUERY, "mode": "exploratory"}, headers)
    assert ids_in(recalled) == [new]
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [new]
    assert "1 memory for this project (project: 1)" in await tool(url, "memory_stats", {}, headers)
    # The retired text sent again is a new memory, not "already known" as the retired one.
    again = await tool(url, "remember", {"content": PORT_OLD}, headers)
    assert again.startswith("[MEMORY] Stored as ") and old not in again


async def test_a_chain_resolves_to_the_newest_and_history_shows_it_newest_first(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    a = await stored(url, headers, "The ingest worker image uses Python 3.10.")
    b = ids_in(
        await tool(
            url,
            "remember",
            {"content": "The ingest worker image uses Python 3.12.", "replaces": a},
            headers,
        )
    )[0]
    c = ids_in(
        await tool(
            url,
            "remember",
            {"content": "The ingest worker image uses Python 3.13.", "replaces": b},
            headers,
        )
    )[0]
    recalled = await tool(
        url, "recall", {"query": "ingest worker Python version", "mode": "exploratory"}, headers
    )
    assert ids_in(recalled) == [c]
    again = await refused(
        url, "remember", {"content": "The ingest worker uses Python 3.14.", "replaces": a}, headers
    )
    assert "`replaces`" in again and f"already replaced by {b}" in again
    assert f"replaces={c}" in again
    for asked in (a, b, c):
        history = await tool(url, "memory_history", {"id": asked}, headers)
        assert history.startswith("[MEMORY] 3 versions"), history
        assert ids_in(history) == [c, b, a]
        assert "status: current" in history
        assert f"status: replaced by {c}" in history and f"status: replaced by {b}" in history
        assert "Python 3.10" in history and "stored 20" in history


async def test_replacing_needs_to_see_the_memory_and_keeps_its_reach(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    in_one = {**headers, "X-Conversation-Id": "thread-1"}
    in_two = {**headers, "X-Conversation-Id": "thread-2"}
    note = await stored(
        url, in_one, "In this thread answers are bullet points only.", scope="conversation"
    )
    hidden = await refused(
        url, "remember", {"content": "Answers are prose.", "replaces": note}, in_two
    )
    assert "`replaces`" in hidden and "no memory" in hidden and "visible" in hidden
    other_tenant = {"X-Memory-Tenant": headers["X-Memory-Tenant"] + "-other"}
    assert "no memory" in await refused(
        url, "remember", {"content": "Answers are prose.", "replaces": note}, other_tenant
    )
    corrected = await tool(
        url,
        "remember",
        {
            "content": "In this thread answers are numbered lists.",
            "replaces": note,
            "scope": "conversation",
        },
        in_one,
    )
    assert f"It replaces {note}" in corrected
    project = await stored(url, headers, "Deploys go out on Tuesdays at 10:00 UTC.")
    narrowed = await refused(
        url,
        "remember",
        {"content": "Deploys go out on Thursdays.", "replaces": project, "scope": "conversation"},
        in_one,
    )
    assert "`replaces`" in narrowed and 'scope "project"' in narrowed
    # Refusals wrote nothing.
    listed = ids_in(await tool(url, "list_memories", {}, headers))
    assert listed == [project]


async def test_forgetting_a_version_keeps_the_rest_of_the_chain_as_it_was(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    a = await stored(url, headers, "Nightly backups run at 02:00 UTC.")
    b = ids_in(
        await tool(
            url,
            "remember",
            {"content": "Nightly backups run at 03:30 UTC.", "replaces": a},
            headers,
        )
    )[0]
    assert "Deleted" in await tool(url, "forget", {"id": b}, headers)
    # What B replaced stays retired: nothing current is left on the subject.
    assert ids_in(await tool(url, "list_memories", {}, headers)) == []
    history = await tool(url, "memory_history", {"id": a}, headers)
    assert ids_in(history) == [b, a] and "forgotten" in history
    # A retired version can be forgotten too; then nothing of the chain is left to show.
    assert "Deleted" in await tool(url, "forget", {"id": a}, headers)
    assert "No memory with id" in await tool(url, "memory_history", {"id": a}, headers)


async def corrected(url: str, headers: dict[str, str], content: str, replaces: str) -> str:
    text = await tool(url, "remember", {"content": content, "replaces": replaces}, headers)
    assert f"It replaces {replaces}" in text, text
    return ids_in(text)[0]


async def test_a_chain_stays_correctable_whichever_member_is_forgotten(
    servers: Servers, headers: dict[str, str]
) -> None:
    # Issue 42, item 10: A corrected by B, B forgotten: neither A nor B could be corrected.
    url = servers.first
    a = await stored(url, headers, "The cache warms up at 05:00 UTC.")
    b = await corrected(url, headers, "The cache warms up at 05:30 UTC.", a)
    assert "Deleted" in await tool(url, "forget", {"id": b}, headers)
    gone = await refused(url, "remember", {"content": "At 06:00.", "replaces": b}, headers)
    assert f"no memory {b} is visible" in gone and f"pass replaces={a}" in gone, gone
    c = await corrected(url, headers, "The cache warms up at 06:00 UTC.", a)
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [c]
    history = await tool(url, "memory_history", {"id": c}, headers)
    assert ids_in(history) == [c, b, a] and "status: current" in history, history
    # The newest of A → C → D forgotten: C is the one to correct, and A is pointed at it.
    d = await corrected(url, headers, "The cache warms up at 06:15 UTC.", c)
    assert "Deleted" in await tool(url, "forget", {"id": d}, headers)
    older = await refused(url, "remember", {"content": "At 06:30.", "replaces": a}, headers)
    assert f"already replaced by {b}, {c}" in older and f"pass replaces={c}" in older, older
    e = await corrected(url, headers, "The cache warms up at 06:30 UTC.", c)
    # The middle of C → E → F forgotten: F is current still, and C is pointed at it.
    f = await corrected(url, headers, "The cache warms up at 06:45 UTC.", e)
    assert "Deleted" in await tool(url, "forget", {"id": e}, headers)
    middle = await refused(url, "remember", {"content": "At 07:00.", "replaces": c}, headers)
    assert f"pass replaces={f}" in middle, middle
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [f]


async def answered_as_unknown(url: str, name: str, memory_id: str, headers: dict[str, str]) -> bool:
    """Whether ``name(id=memory_id)`` answers, text and structured content, exactly as the
    same tool answers an id that never existed."""
    unknown = "01JD0000000000000000000000"
    asked = await call(url, name, {"id": memory_id}, headers=headers)
    never = await call(url, name, {"id": unknown}, headers=headers)
    same_text = text_of(asked) == text_of(never).replace(unknown, memory_id)
    expected = msgspec.json.decode(
        msgspec.json.encode(never.structured_content).replace(unknown.encode(), memory_id.encode())
    )
    return same_text and asked.structured_content == expected and not asked.is_error


async def test_a_forgotten_note_stays_out_of_another_conversations_history(
    servers: Servers, headers: dict[str, str]
) -> None:
    # Issue 29: N, a note of thread-1, replaced there by the project memory P, then forgotten.
    url = servers.first
    in_one = {**headers, "X-Conversation-Id": "thread-1"}
    in_two = {**headers, "X-Conversation-Id": "thread-2"}
    note = await stored(
        url, in_one, "In this thread the retry budget is 3 attempts.", scope="conversation"
    )
    text = await tool(
        url,
        "remember",
        {"content": "The retry budget is 5 attempts for every client.", "replaces": note},
        in_one,
    )
    project = ids_in(text)[0]
    assert "Deleted" in await tool(url, "forget", {"id": note}, in_one)
    for elsewhere in (in_two, headers):
        history = await tool(url, "memory_history", {"id": project}, elsewhere)
        assert history.startswith("[MEMORY] 1 version"), history
        assert ids_in(history) == [project] and note not in history
        assert await answered_as_unknown(url, "memory_history", note, elsewhere)
    # Where the note lived, nothing left proves it was a note of this thread rather than
    # another's (a project memory may replace either): it is hidden there too.
    history = await tool(url, "memory_history", {"id": project}, in_one)
    assert ids_in(history) == [project]
    assert await answered_as_unknown(url, "memory_history", note, in_one)


async def test_a_forgotten_version_shows_where_its_neighbours_prove_it_could_be_seen(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    in_one = {**headers, "X-Conversation-Id": "thread-1"}
    in_two = {**headers, "X-Conversation-Id": "thread-2"}
    # A note replaced by a note: both are notes of the one thread (remember allows no other).
    first = await stored(url, in_one, "In this thread logs go to /tmp/a.", scope="conversation")
    text = await tool(
        url,
        "remember",
        {
            "content": "In this thread logs go to /tmp/b.",
            "replaces": first,
            "scope": "conversation",
        },
        in_one,
    )
    second = ids_in(text)[0]
    assert "Deleted" in await tool(url, "forget", {"id": first}, in_one)
    history = await tool(url, "memory_history", {"id": first}, in_one)
    assert history.startswith("[MEMORY] 2 versions") and ids_in(history) == [second, first]
    assert "forgotten" in history
    for elsewhere in (in_two, headers):
        assert await answered_as_unknown(url, "memory_history", first, elsewhere)
        assert await answered_as_unknown(url, "memory_history", second, elsewhere)
    # A version forgotten after its note: what replaced a note of thread-1 is seen at least
    # there, so thread-1 still sees the version and nobody else does.
    third = ids_in(
        await tool(
            url,
            "remember",
            {"content": "Logs go to /var/log/app everywhere.", "replaces": second},
            in_one,
        )
    )[0]
    assert "Deleted" in await tool(url, "forget", {"id": third}, in_one)
    history = await tool(url, "memory_history", {"id": second}, in_one)
    assert ids_in(history) == [third, second, first]
    for elsewhere in (in_two, headers):
        assert await answered_as_unknown(url, "memory_history", third, elsewhere)


async def test_a_cycle_already_stored_hides_nothing_and_can_be_corrected(
    servers: Servers, headers: dict[str, str]
) -> None:
    # Issue 29: an import that did not check its links stored Y → Z → Y and X → X.
    url = servers.first
    y = await stored(url, headers, "The billing service retries every 10 minutes.")
    z = await stored(url, headers, "The billing service retries every 15 minutes.")
    x = await stored(url, headers, "The audit log is kept for 400 days.")
    async with same_stores(servers) as (_, stores):
        for old, new in ((y, z), (z, y), (x, x)):
            await stores.objects.put(
                replaced_key(headers["X-Memory-Tenant"], old, new), "", if_none_match=True
            )
    servers.clock.advance(DEFAULT_CACHE_TTL_MS + 1)  # the server's cached view has expired
    # Records on a cycle are void: every member is current.
    assert set(ids_in(await tool(url, "list_memories", {}, headers))) == {x, y, z}
    assert "3 memories" in await tool(url, "memory_stats", {}, headers)
    recalled = await tool(
        url, "recall", {"query": "billing service retry interval", "mode": "exploratory"}, headers
    )
    assert {y, z} <= set(ids_in(recalled))
    history = await tool(url, "memory_history", {"id": y}, headers)
    assert history.startswith("[MEMORY] 2 versions") and ids_in(history) == [z, y]
    assert "replaced by" not in history and history.count("status: current") == 2
    history = await tool(url, "memory_history", {"id": x}, headers)
    assert history.startswith("[MEMORY] 1 version") and "replaced by" not in history
    # And each can be corrected as any current memory can.
    text = await tool(
        url,
        "remember",
        {"content": "The billing service retries every 20 minutes.", "replaces": y},
        headers,
    )
    w = ids_in(text)[0]
    assert f"It replaces {y}" in text
    text = await tool(
        url, "remember", {"content": "The audit log is kept for 365 days.", "replaces": x}, headers
    )
    v = ids_in(text)[0]
    assert set(ids_in(await tool(url, "list_memories", {}, headers))) == {z, w, v}
    history = await tool(url, "memory_history", {"id": z}, headers)
    assert ids_in(history) == [w, z, y] and f"status: replaced by {w}" in history
    again = await refused(url, "remember", {"content": "Every 25 minutes.", "replaces": y}, headers)
    assert f"already replaced by {w}" in again and f"replaces={w}" in again


async def test_a_linked_update_can_still_retire_what_it_updates_with_replaces(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, PORT_OLD)
    text = await tool(url, "remember", {"content": PORT_NEW}, headers)
    new = ids_in(text)[0]
    assert f"It probably updates {old}" in text and f"replaces={old}" in text
    # Retiring it: the same fact again, now with replaces, writes nothing new.
    followed = await tool(url, "remember", {"content": PORT_NEW, "replaces": old}, headers)
    assert followed.startswith("[MEMORY] Already known") and f"It replaces {old}" in followed
    assert ids_in(followed)[0] == new
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [new]
    unrelated = await tool(
        url, "remember", {"content": "The docs site is built with MkDocs."}, headers
    )
    assert "probably updates" not in unrelated


async def test_another_process_sees_a_replacement_within_the_cache_window(
    servers: Servers, headers: dict[str, str]
) -> None:
    tenant = headers["X-Memory-Tenant"]
    old = await stored(servers.first, headers, PORT_OLD)
    async with second_process(servers) as other:
        # The other process reads (and caches) this tenant's records before the replacement.
        listed = (await list_page(other, tenant, None, match=ListFilter(), limit=20)).memories
        assert [m.id for m in listed] == [old]
        text = await tool(
            servers.first, "remember", {"content": PORT_NEW, "replaces": old}, headers
        )
        new = ids_in(text)[0]
        # At once in the process that wrote it.
        assert ids_in(await tool(servers.first, "list_memories", {}, headers)) == [new]
        # In the other once its cached view is older than the window (60 s).
        servers.clock.advance(DEFAULT_CACHE_TTL_MS + 1)
        listed = (await list_page(other, tenant, None, match=ListFilter(), limit=20)).memories
        assert [m.id for m in listed] == [new]
        answer = await recall(other, tenant, None, query=PORT_QUERY, mode="exploratory", limit=10)
        assert answer.outcome is not None
        assert [r.memory.id for r in answer.outcome.results] == [new]
        assert (await stats(other, tenant, None)).total == 1


async def test_an_expired_memory_is_invisible_from_the_moment_it_expires(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    temporary = await stored(
        url, headers, "The release freeze lasts until the audit ends.", expires_in_days=1
    )
    lasting = await stored(url, headers, "Code review needs two approvals.")
    history = await tool(url, "memory_history", {"id": temporary}, headers)
    assert f"expires {iso_ms(servers.clock() + DAY_MS)[:10]}" in history, history
    assert set(ids_in(await tool(url, "list_memories", {}, headers))) == {temporary, lasting}
    servers.clock.advance(DAY_MS - 60_000)
    assert temporary in ids_in(
        await tool(url, "recall", {"query": "release freeze", "mode": "exploratory"}, headers)
    )
    assert "The release freeze" in await tool(url, "memory_get", {"id": temporary}, headers)
    servers.clock.advance(60_001)
    # memory_get answers an expired id exactly as an id that never existed.
    unknown = "01JD0000000000000000000000"
    assert await tool(url, "memory_get", {"id": temporary}, headers) == (
        await tool(url, "memory_get", {"id": unknown}, headers)
    ).replace(unknown, temporary)
    recalled = await tool(
        url, "recall", {"query": "release freeze", "mode": "exploratory"}, headers
    )
    assert temporary not in ids_in(recalled)
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [lasting]
    assert "1 memory for this project" in await tool(url, "memory_stats", {}, headers)
    assert "No memory with id" in await tool(url, "forget", {"id": temporary}, headers)
    again = await tool(
        url, "remember", {"content": "The release freeze lasts until the audit ends."}, headers
    )
    assert again.startswith("[MEMORY] Stored as ") and temporary not in again


async def test_remember_states_the_expiry_date(servers: Servers, headers: dict[str, str]) -> None:
    text = await tool(
        servers.first,
        "remember",
        {
            "content": "The staging database is read-only during the migration.",
            "expires_in_days": 7,
        },
        headers,
    )
    expected = time.strftime("%Y-%m-%d", time.gmtime((servers.clock() + 7 * DAY_MS) / 1000))
    assert f"It expires on {expected}." in text


async def test_bulk_forget_counts_first_and_deletes_only_with_confirm(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    thread = {**headers, "X-Conversation-Id": "thread-9"}
    tagged = [
        await stored(url, headers, f"Scratch note {n}: try batch size {n * 16}.", tags=["tmp"])
        for n in range(1, 4)
    ]
    decision = await stored(url, headers, "We chose Postgres 16.", category="decision")
    note = await stored(url, thread, "This thread is about the login bug.", scope="conversation")
    dry = await tool(url, "forget", {"filter": {"tag": "tmp"}}, headers)
    assert dry.startswith("[MEMORY] 3 memories match") and "Nothing was deleted" in dry
    assert "5 memories" in await tool(url, "memory_stats", {}, thread)
    done = await tool(url, "forget", {"filter": {"tag": "tmp"}, "confirm": True}, headers)
    assert "Deleted 3; nothing else matches" in done
    assert set(ids_in(await tool(url, "list_memories", {}, thread))) == {decision, note}
    assert not set(tagged) & set(ids_in(await tool(url, "list_memories", {}, thread)))
    # conversation_only reaches this thread's notes only, and never from another thread.
    other = {**headers, "X-Conversation-Id": "thread-10"}
    assert "0 memories match" in await tool(
        url, "forget", {"filter": {"conversation_only": True}}, other
    )
    assert "1 memory matches" in await tool(
        url, "forget", {"filter": {"conversation_only": True}}, thread
    )
    assert "Deleted 1" in await tool(
        url, "forget", {"filter": {"category": "decision"}, "confirm": True}, headers
    )
    old = await tool(url, "forget", {"filter": {"older_than_days": 1}}, headers)
    assert old.startswith("[MEMORY] 0 memories match")
    servers.clock.advance(2 * DAY_MS)
    assert "1 memory matches" in await tool(
        url, "forget", {"filter": {"older_than_days": 1}}, thread
    )


async def test_bulk_forget_deletes_at_most_a_thousand_per_call_and_says_what_remains(
    servers: Servers, headers: dict[str, str]
) -> None:
    tenant = headers["X-Memory-Tenant"]
    count = BULK_FORGET_BATCH + 5
    # Written straight into the store, as remember writes them (embedding 1,005 texts over MCP
    # would only slow the test): the index key, then the vector.
    async with same_stores(servers) as (_, stores):
        gate = asyncio.Semaphore(16)

        async def put(n: int) -> None:
            now_ms = servers.clock() - n
            memory = Memory(
                id=new_ulid(now_ms),
                tenant=tenant,
                content=f"Generated snippet {n}.",
                memory_type="pattern",
                created_at=iso_ms(now_ms),
            )
            async with gate:
                await stores.objects.put(index_key(memory), "")
                await stores.vectors.put(memory, [1.0] + [0.0] * 383)

        await asyncio.gather(*(put(n) for n in range(count)))
    kept = await stored(servers.first, headers, "Reviews need two approvals.")
    dry = await tool(servers.first, "forget", {"filter": {"type": "pattern"}}, headers)
    assert dry.startswith(f"[MEMORY] {count} memories match")
    first = await tool(
        servers.first, "forget", {"filter": {"type": "pattern"}, "confirm": True}, headers
    )
    assert f"Deleted {BULK_FORGET_BATCH}; 5 more match" in first
    second = await tool(
        servers.first, "forget", {"filter": {"type": "pattern"}, "confirm": True}, headers
    )
    assert "Deleted 5; nothing else matches" in second
    assert ids_in(await tool(servers.first, "list_memories", {}, headers)) == [kept]
    assert "1 memory for this project" in await tool(servers.first, "memory_stats", {}, headers)


REFUSALS: list[tuple[str, dict[str, object], str, str]] = [
    ("remember", {"content": "x", "replaces": "not-an-id"}, "replaces", "must be a memory id"),
    ("remember", {"content": "x", "replaces": 7}, "replaces", "must be a memory id"),
    (
        "remember",
        {"content": "x", "replaces": "01JAAAAAAAAAAAAAAAAAAAAAAA"},
        "replaces",
        "no memory",
    ),
    ("remember", {"content": "x", "expires_in_days": 0}, "expires_in_days", "between 1 and 3650"),
    (
        "remember",
        {"content": "x", "expires_in_days": 3651},
        "expires_in_days",
        "between 1 and 3650",
    ),
    ("remember", {"content": "x", "expires_in_days": 1.5}, "expires_in_days", "between 1 and 3650"),
    ("remember", {"content": "x", "expires_in_days": "7"}, "expires_in_days", "between 1 and 3650"),
    (
        "remember",
        {"content": "x", "expires_in_days": True},
        "expires_in_days",
        "between 1 and 3650",
    ),
    ("forget", {}, "id", "either `id`"),
    ("forget", {"id": "01JAAAAAAAAAAAAAAAAAAAAAAA", "filter": {"tag": "t"}}, "id", "not both"),
    ("forget", {"id": "01JAAAAAAAAAAAAAAAAAAAAAAA", "confirm": True}, "confirm", "goes with"),
    ("forget", {"filter": {}}, "filter", "is empty"),
    ("forget", {"filter": "tag=tmp"}, "filter", "must be an object"),
    ("forget", {"filter": {"colour": "red"}}, "filter.colour", "unknown field"),
    ("forget", {"filter": {"type": "secret"}}, "filter.type", "project, pattern"),
    ("forget", {"filter": {"tag": " "}}, "filter.tag", "non-empty string"),
    ("forget", {"filter": {"category": 3}}, "filter.category", "non-empty string"),
    ("forget", {"filter": {"older_than_days": 0}}, "filter.older_than_days", "between 1 and"),
    (
        "forget",
        {"filter": {"conversation_only": "yes"}},
        "filter.conversation_only",
        "true or false",
    ),
    (
        "forget",
        {"filter": {"conversation_only": True}},
        "filter.conversation_only",
        "X-Conversation-Id",
    ),
    ("forget", {"filter": {"tag": "t"}, "confirm": "yes"}, "confirm", "true or false"),
    # Filter strings are held to remember's limits and characters (issue 29): a 100 KB
    # category used to answer "0 match", a NUL passed through to the store.
    ("forget", {"filter": {"category": "c" * 100_000}}, "filter.category", "at most 128 bytes"),
    ("forget", {"filter": {"tag": "t" * 65}}, "filter.tag", "at most 64 bytes"),
    ("forget", {"filter": {"category": "a\x00b"}}, "filter.category", "NUL character"),
    ("forget", {"filter": {"tag": "t\x00"}, "confirm": True}, "filter.tag", "NUL character"),
    ("memory_history", {}, "id", "must be a memory id"),
    ("memory_history", {"id": "abc"}, "id", "must be a memory id"),
]


@pytest.mark.parametrize(("name", "arguments", "field", "expected"), REFUSALS)
async def test_every_refusal_names_its_field_and_writes_nothing(
    servers: Servers,
    headers: dict[str, str],
    name: str,
    arguments: dict[str, object],
    field: str,
    expected: str,
) -> None:
    kept = await stored(servers.first, headers, "Kept through every refusal.", tags=["t"])
    text = await refused(servers.first, name, arguments, headers)
    assert text.startswith("Error: ") and f"`{field}`" in text and expected in text, text
    assert ids_in(await tool(servers.first, "list_memories", {}, headers)) == [kept]
