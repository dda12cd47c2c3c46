"""The keyword leg's lexicon on both backends (PostgreSQL, and S3 over moto's HTTP server): own
writes at once, other processes' after a refresh, a 0.9.0 tenant backfilled, forgets, folds."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import msgspec
import pytest

from shared.lexical import LEXICON_LOG, Lexicon
from shared.lexical.lexicon import DEFAULT_REFRESH_S
from shared.lexical.segments import (
    LEXICON_LAYOUT,
    LEXICON_VERSION,
    decode_merged,
)
from shared.model import Memory, index_key, iso_ms, new_ulid
from shared.storage import Stores

NOW_MS = 1_800_000_000_000
LAG_MS = 60_000


class Clock:
    def __init__(self, now_ms: int = NOW_MS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


_MADE: list[Lexicon] = []


def lexicon(
    stores: Stores, clock: Callable[[], int], name: str, *, refresh_s: float = DEFAULT_REFRESH_S
) -> Lexicon:
    made = Lexicon(
        stores.objects, stores.vectors, process_id=name, clock_ms=clock, refresh_s=refresh_s
    )
    _MADE.append(made)
    return made


@pytest.fixture(autouse=True)
async def _lexicons_settled(stores: Stores) -> AsyncIterator[None]:
    """Every lexicon a test made finishes its background work and closes before the test's
    stores do: a search that finds a refresh due starts it in the background, and the
    session's one event loop would run it on into the next test, against closed stores."""
    yield
    while _MADE:
        made = _MADE.pop()
        await made.settled()
        await made.close()


async def stored(stores: Stores, tenant: str, content: str, dim: int, at_ms: int) -> Memory:
    """A memory as 0.9.0 wrote it: the vector, then the index key, and nothing else."""
    memory = Memory(id=new_ulid(at_ms), tenant=tenant, content=content, created_at=iso_ms(at_ms))
    await stores.vectors.put(memory, [1.0] + [0.0] * (dim - 1))
    await stores.objects.put(index_key(memory), "")
    return memory


async def found(lex: Lexicon, tenant: str, query: str) -> list[str]:
    return [hit.memory_id for hit in (await lex.query(tenant, query)).result(top_k=10).hits]


async def test_own_write_is_findable_at_once_and_another_process_finds_it_after_refresh(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    writer = lexicon(stores, clock, "writer")
    reader = lexicon(stores, clock, "reader", refresh_s=0.0)
    assert await found(reader, "t1", "E1042") == []  # loaded (and backfilled) empty
    text = "CI fails with error E1042 on a stale cache"
    memory = await stored(stores, "t1", text, embedding_dim, NOW_MS)
    await writer.added(memory)
    assert await found(writer, "t1", "e1042") == [memory.id]
    await found(reader, "t1", "E1042")  # notices it is due and refreshes in the background
    await reader.settled()
    assert await found(reader, "t1", "what fixes E1042?") == [memory.id]


async def test_a_tenant_written_by_0_9_0_is_backfilled_once_from_its_memories(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    old = [
        await stored(stores, "t2", text, embedding_dim, NOW_MS - i)
        for i, text in enumerate(["deploy with make deploy", "the flag --local starts it"])
    ]
    first = lexicon(stores, clock, "first")
    assert await found(first, "t2", "--local") == [old[1].id]
    assert first.stats.backfilled == 1
    merged = await stores.objects.get(LEXICON_LAYOUT.merged_key("t2"))
    assert merged is not None
    assert set(decode_merged(merged.body).docs) == {m.id for m in old}  # type: ignore[union-attr]
    second = lexicon(stores, clock, "second")
    assert await found(second, "t2", "deploy") == [old[0].id]
    assert second.stats.backfilled == 0


async def test_a_tenant_written_since_is_backfilled_from_its_shards_alone(
    stores: Stores, embedding_dim: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Every memory written since the keyword leg has a shard: merged.json is built from them,
    and only a memory none of them adds (a 0.9.0 one) is read from the vectors."""
    clock = Clock()
    writer = lexicon(stores, clock, "writer")
    legacy = await stored(stores, "t13", "nightly: RESTIC_BACKUP", embedding_dim, NOW_MS)
    since = []
    for i, text in enumerate(["RESTIC_BACKUP keeps 7 days", "the storage bucket is b2-archive"]):
        memory = await stored(stores, "t13", text, embedding_dim, NOW_MS + 1 + i)
        await writer.added(memory)
        since.append(memory)
    caplog.set_level("INFO", logger="shared.lexical.stored")
    reader = lexicon(stores, clock, "reader")
    assert set(await found(reader, "t13", "RESTIC_BACKUP")) == {legacy.id, since[0].id}
    assert await found(reader, "t13", "bucket") == [since[1].id]
    assert reader.stats.backfilled == 1
    (backfilled,) = [r for r in caplog.records if r.getMessage() == "lexicon_backfilled"]
    assert (backfilled.documents, backfilled.read) == (3, 1)  # type: ignore[attr-defined]
    merged = await stores.objects.get(LEXICON_LAYOUT.merged_key("t13"))
    assert merged is not None
    docs = decode_merged(merged.body).docs  # type: ignore[union-attr]
    assert set(docs) == {legacy.id, *(m.id for m in since)}


async def test_a_lexicon_the_previous_format_wrote_is_rebuilt_into_passages(
    stores: Stores, embedding_dim: int
) -> None:
    """Version 3 (one term-count map per memory, as the last release wrote it) is read as
    another version: the first process to search rebuilds merged.json from the memories, under
    a compare-and-swap, and its own-format shards are ignored rather than misread."""
    long = " ".join(["The deploy pipeline builds images and pushes them."] * 60)
    memory = await stored(
        stores, "t9", long + " Set NGINX_PROXY_TIMEOUT_Q2000.", embedding_dim, NOW_MS
    )
    old_docs = {memory.id: {"deploy": 60, "nginx_proxy_timeout_q2000": 1}}
    await stores.objects.put(
        LEXICON_LAYOUT.merged_key("t9"), json.dumps({"v": 3, "watermark": "", "docs": old_docs})
    )
    await stores.objects.put(
        LEXICON_LAYOUT.shard_key("t9", "00000000000000000000000000-old"),
        json.dumps({"v": 3, "add": {"x": {"deploy": 1}}}),
    )
    upgraded = lexicon(stores, Clock(), "upgraded")
    assert await found(upgraded, "t9", "NGINX_PROXY_TIMEOUT_Q2000") == [memory.id]
    assert upgraded.stats.backfilled == 1
    merged = await stores.objects.get(LEXICON_LAYOUT.merged_key("t9"))
    assert merged is not None
    rebuilt = decode_merged(merged.body)
    assert rebuilt is not None and rebuilt.v == LEXICON_VERSION
    assert len(rebuilt.docs[memory.id]) > 1  # passages, not one map
    assert await found(upgraded, "t9", "deploy") == [memory.id]  # "x" of the old shard: ignored


async def test_a_forgotten_memory_is_not_found_here_or_elsewhere(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    here = lexicon(stores, clock, "here")
    there = lexicon(stores, clock, "there", refresh_s=0.0)
    memory = await stored(stores, "t3", "rotate the PAGERDUTY_TOKEN monthly", embedding_dim, NOW_MS)
    await here.added(memory)
    assert await found(there, "t3", "pagerduty_token") == [memory.id]
    await here.removed("t3", [memory.id])
    assert await found(here, "t3", "pagerduty_token") == []
    await found(there, "t3", "pagerduty_token")
    await there.settled()
    assert await found(there, "t3", "pagerduty_token") == []


async def test_a_fold_absorbs_shards_older_than_the_lag_and_a_fresh_reader_sees_everything(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    writer = lexicon(stores, clock, "writer")
    await found(writer, "t4", "x")  # backfills an empty merged.json
    memories = []
    for i in range(3):
        memory = await stored(stores, "t4", f"service {i} uses port 80{i}0", embedding_dim, NOW_MS)
        await writer.added(memory)
        memories.append(memory)
    clock.now_ms = NOW_MS + LAG_MS // 2
    young = await stored(stores, "t4", "service young uses port 9999", embedding_dim, NOW_MS)
    await writer.added(young)
    await writer.removed("t4", [memories[0].id])

    result = await LEXICON_LOG.fold(stores.objects, "t4", now_ms=NOW_MS + LAG_MS, lag_ms=LAG_MS)
    assert (result.shards_folded, result.shards_deleted, result.conflict) == (3, 3, False)
    remaining = await LEXICON_LAYOUT.names(stores.objects, "t4")
    assert len(remaining) == 2  # the young memory and the removal stay above the watermark
    fresh = lexicon(stores, clock, "fresh")
    assert set(await found(fresh, "t4", "port")) == {memories[1].id, memories[2].id, young.id}


async def test_a_fold_never_creates_merged_json_for_a_tenant_not_backfilled(
    stores: Stores, embedding_dim: int
) -> None:
    """Only a backfill, which reads the memories themselves, may create it: a fold that did
    would hide every memory written before the keyword leg existed."""
    clock = Clock()
    old = await stored(stores, "t5", "legacy memory about KAFKA_BROKERS", embedding_dim, NOW_MS)
    writer = lexicon(stores, clock, "writer")
    new = await stored(stores, "t5", "new memory about KAFKA_BROKERS", embedding_dim, NOW_MS)
    await writer.added(new)  # a shard, but this process never loaded (or backfilled) t5
    result = await LEXICON_LOG.fold(stores.objects, "t5", now_ms=NOW_MS + 2 * LAG_MS, lag_ms=LAG_MS)
    assert result.shards_folded == 0
    assert await stores.objects.get(LEXICON_LAYOUT.merged_key("t5")) is None
    assert set(await found(lexicon(stores, clock, "later"), "t5", "KAFKA_BROKERS")) == {
        old.id,
        new.id,
    }


@pytest.mark.parametrize("query", ["", "the of and"])
async def test_a_query_with_no_terms_finds_nothing(stores: Stores, query: str) -> None:
    assert await found(lexicon(stores, Clock(), "p"), "t6", query) == []


async def test_the_least_recently_searched_tenant_is_dropped_past_the_entry_budget(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    lex = Lexicon(stores.objects, stores.vectors, process_id="p", clock_ms=clock, max_entries=8)
    for tenant in ("t7", "t8"):
        memory = await stored(
            stores, tenant, f"{tenant} alpha beta gamma delta", embedding_dim, NOW_MS
        )
        await lex.added(memory)
    assert await found(lex, "t7", "alpha") and lex.stats.loads == 1
    assert await found(lex, "t8", "alpha") and lex.stats.loads == 2  # t7 is dropped here
    assert await found(lex, "t8", "beta") and lex.stats.loads == 2
    assert await found(lex, "t7", "gamma") and lex.stats.loads == 3  # read again, still right


async def _written_then_folded(
    stores: Stores, clock: Clock, tenant: str, dim: int, reader: Lexicon | None
) -> tuple[list[Memory], Memory]:
    """Three memories and a forget written by one process (``reader``, when given, refreshing
    after each write), then folded past the lag; the memories and the one written after."""
    writer = lexicon(stores, clock, "writer")
    await found(writer, tenant, "x")  # backfills an empty merged.json
    memories = []
    for i in range(3):
        memory = await stored(stores, tenant, f"worker {i} listens on 70{i}0", dim, NOW_MS)
        await writer.added(memory)
        memories.append(memory)
        if reader is not None:
            await found(reader, tenant, "worker")
            await reader.settled()
    await writer.removed(tenant, [memories[0].id])
    if reader is not None:
        await found(reader, tenant, "worker")
        await reader.settled()
    result = await LEXICON_LOG.fold(
        stores.objects, tenant, now_ms=NOW_MS + 2 * LAG_MS, lag_ms=LAG_MS
    )
    assert result.shards_folded == 4
    clock.now_ms = NOW_MS + 2 * LAG_MS
    later = await stored(stores, tenant, "worker later listens on 7999", dim, clock.now_ms)
    await writer.added(later)
    return memories, later


async def test_a_reader_that_refreshed_within_the_lag_keeps_its_index_across_a_fold(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    reader = lexicon(stores, clock, "reader", refresh_s=0.0)
    await found(reader, "t9", "x")
    memories, later = await _written_then_folded(stores, clock, "t9", embedding_dim, reader)
    await found(reader, "t9", "worker")  # notices the fold: adopts it, then reads the new shard
    await reader.settled()
    assert (reader.stats.adopted, reader.stats.loads) == (1, 1)
    expected = {memories[1].id, memories[2].id, later.id}
    assert set(await found(reader, "t9", "worker")) == expected
    assert set(await found(lexicon(stores, clock, "fresh"), "t9", "worker")) == expected
    merged = await stores.objects.get(LEXICON_LAYOUT.merged_key("t9"))
    assert merged is not None
    assert "7000" not in merged.body  # the forget was folded in, not only hidden here


async def test_a_reader_that_missed_folded_shards_reads_merged_json_again(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    reader = lexicon(stores, clock, "reader", refresh_s=0.0)
    await found(reader, "t10", "x")  # loaded before the writes, and not refreshed since
    memories, later = await _written_then_folded(stores, clock, "t10", embedding_dim, None)
    await found(reader, "t10", "worker")
    await reader.settled()
    assert (reader.stats.adopted, reader.stats.loads) == (0, 2)
    assert set(await found(reader, "t10", "worker")) == {
        memories[1].id,
        memories[2].id,
        later.id,
    }


async def test_a_memory_is_found_by_its_labels_here_elsewhere_and_after_a_rebuild(
    stores: Stores, embedding_dim: int
) -> None:
    """Category and tags reach the lexicon with the memory's write, and a tenant indexed before
    labels were (format 4) is rebuilt with them from the memories themselves."""
    memory = Memory(
        id=new_ulid(NOW_MS),
        tenant="t10",
        content="Postgres connections go through pgbouncer in transaction mode.",
        category="database",
        tags=("observability",),
        created_at=iso_ms(NOW_MS),
    )
    await stores.vectors.put(memory, [1.0] + [0.0] * (embedding_dim - 1))
    await stores.objects.put(index_key(memory), "")
    clock = Clock()
    writer = lexicon(stores, clock, "writer")
    await writer.added(memory)
    assert await found(writer, "t10", "observability") == [memory.id]
    assert (await writer.query("t10", "database")).result(top_k=1).hits[0].labelled
    assert await found(lexicon(stores, clock, "elsewhere"), "t10", "database") == [memory.id]

    old = {"v": 4, "watermark": "", "docs": {memory.id: [{"pgbouncer": 1}]}}
    await stores.objects.put(LEXICON_LAYOUT.merged_key("t11"), json.dumps(old))
    await stores.vectors.put(
        msgspec.structs.replace(memory, tenant="t11"), [1.0] + [0.0] * (embedding_dim - 1)
    )
    await stores.objects.put(index_key(msgspec.structs.replace(memory, tenant="t11")), "")
    upgraded = lexicon(stores, clock, "upgraded")
    assert await found(upgraded, "t11", "observability") == [memory.id]
    assert upgraded.stats.backfilled == 1
    merged = await stores.objects.get(LEXICON_LAYOUT.merged_key("t11"))
    assert merged is not None
    rebuilt = decode_merged(merged.body)
    assert rebuilt is not None and rebuilt.labels == {memory.id: ["databas", "observ"]}


async def test_a_question_asked_again_is_scored_again_only_when_the_index_changed(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    here = lexicon(stores, clock, "here")
    there = lexicon(stores, clock, "there", refresh_s=0.0)
    first = await stored(stores, "t9", "the CI cache breaks with E1042", embedding_dim, NOW_MS)
    await here.added(first)
    asked = await here.query("t9", "why does the CI cache break?")
    assert await here.query("t9", "why does the CI cache break?") is asked
    assert await here.query("t9", "why does the cache break?") is not asked
    # Asked again with the same arguments, the query's answers are its last ones.
    result = asked.result(top_k=10, include=[first.id])
    assert asked.result(top_k=10, include=[first.id]) is result
    assert asked.result(top_k=10) is not result
    # A write here changes the index: the question is scored again and finds both.
    second = await stored(stores, "t9", "a stale CI cache: clear it", embedding_dim, NOW_MS + 1)
    await here.added(second)
    again = await here.query("t9", "why does the CI cache break?")
    assert again is not asked
    assert {hit.memory_id for hit in again.result(top_k=10).hits} == {first.id, second.id}
    # Another process's write reaches this one by a refresh, which changes the index too.
    assert set(await found(there, "t9", "stale cache")) == {first.id, second.id}
    await there.settled()  # the refresh its first search started
    third = await stored(stores, "t9", "the cache went stale again", embedding_dim, NOW_MS + 2)
    await here.added(third)
    await found(there, "t9", "stale cache")  # due: refreshes in the background
    await there.settled()
    assert third.id in await found(there, "t9", "stale cache")
    # Forgetting changes it as well.
    await here.removed("t9", [third.id])
    assert third.id not in await found(here, "t9", "stale cache")


async def test_kept_questions_are_bounded_and_go_with_their_tenants_index(
    stores: Stores, embedding_dim: int
) -> None:
    clock = Clock()
    lex = Lexicon(
        stores.objects,
        stores.vectors,
        process_id="p",
        clock_ms=clock,
        max_entries=8,
        kept_queries=2,
    )
    for tenant in ("t10", "t11"):
        memory = await stored(
            stores, tenant, f"{tenant} alpha beta gamma delta", embedding_dim, NOW_MS
        )
        await lex.added(memory)
    alpha = await lex.query("t10", "alpha")
    await lex.query("t10", "beta")
    assert await lex.query("t10", "alpha") is alpha
    await lex.query("t10", "gamma")  # the third: "beta", asked least lately, is let go
    assert await lex.query("t10", "alpha") is alpha
    assert sorted(query for _, query in lex._asked) == ["alpha", "gamma"]
    # Past the entry budget t10's index is let go, and its kept questions with it.
    await lex.query("t11", "alpha")
    assert all(tenant == "t11" for tenant, _ in lex._asked)
    assert await lex.query("t10", "alpha") is not alpha


async def test_a_new_memorys_words_are_matched_without_waiting_for_a_tenant_to_be_read(
    stores: Stores, embedding_dim: int
) -> None:
    """``sharing_words`` (remember's) answers nothing for a tenant this process does not hold
    and reads it in the background; then it answers the best matches, not kept as a question."""
    clock = Clock()
    texts = ["Hugo Bernard works for the European Space Agency.", "Ravi Patel works for Nokia."]
    kept = [
        await stored(stores, "t9", text, embedding_dim, NOW_MS + i) for i, text in enumerate(texts)
    ]
    lex = lexicon(stores, clock, "remembering")
    new = "Hugo Bernard works for Nokia."
    assert await lex.sharing_words("t9", new, top_k=5) == []
    await lex.settled()
    assert await lex.sharing_words("t9", new, top_k=5) == [kept[0].id, kept[1].id]
    assert await lex.sharing_words("t9", new, top_k=1) == [kept[0].id]
    assert await lex.sharing_words("t9", "the weather in Lima", top_k=5) == []
    assert not lex._asked  # a new memory's text is no question that may be asked again
