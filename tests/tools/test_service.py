"""MemoryService against real PostgreSQL and the real local model.

Fixture texts are chosen so the outcome can be explained: a question phrased differently from
the stored fact, an unrelated question, a near-verbatim repetition (dedup) and a reworded one.
"""

from __future__ import annotations

import asyncpg

from services.api.service import MemoryService
from shared.memories.listing import STATS_SCAN_CAP
from shared.model import Draft
from tests.tools.conftest import Clock

PORT_FACT = "The API server listens on port 3000 inside the Kubernetes cluster."
DB_FACT = "Production data lives in PostgreSQL 16 with the pgvector extension."
STYLE_FACT = "Python code in this repository is formatted with ruff format, line length 100."


async def insert_index_keys(pg_url: str, key_sql: str, count: int) -> None:
    """Many recency-index keys at once, straight into the objects table (``g`` is 1..count)."""
    connection = await asyncpg.connect(pg_url)
    try:
        await connection.execute(
            f"INSERT INTO objects (key, body, version) SELECT {key_sql}, '', "
            "nextval('objects_version') FROM generate_series(1, $1) g",
            count,
        )
    finally:
        await connection.close()


async def remember(
    service: MemoryService,
    content: str,
    *,
    tenant: str = "acme",
    conversation: str | None = None,
    scope: str = "project",
    memory_type: str = "project",
) -> str:
    answer = await service.remember(
        tenant,
        conversation,
        Draft(
            content=content,
            memory_type=memory_type,  # type: ignore[arg-type]
            category=None,
            tags=(),
            scope=scope,  # type: ignore[arg-type]
        ),
    )
    return answer.memory.id


async def test_recall_finds_a_fact_asked_about_in_other_words(service: MemoryService) -> None:
    port_id = await remember(service, PORT_FACT)
    await remember(service, DB_FACT)
    await remember(service, STYLE_FACT)
    answer = await service.recall(
        "acme", None, query="Which port does the API listen on?", mode="balanced", limit=5
    )
    assert answer.outcome is not None and answer.outcome.results
    assert answer.outcome.results[0].memory.id == port_id


async def test_recall_on_an_empty_tenant_says_nothing_is_stored(service: MemoryService) -> None:
    await remember(service, PORT_FACT, tenant="other")
    answer = await service.recall(
        "acme", None, query="Which port does the API listen on?", mode="balanced", limit=5
    )
    assert answer.visible == 0 and answer.outcome is None


async def test_unrelated_question_is_gated_not_answered(service: MemoryService) -> None:
    await remember(service, PORT_FACT)
    await remember(service, DB_FACT)
    answer = await service.recall(
        "acme", None, query="What is the CEO's favourite pizza?", mode="precision", limit=3
    )
    assert answer.outcome is not None
    assert answer.outcome.results == ()
    assert answer.outcome.gated == 2


async def test_near_verbatim_repeat_is_already_known_and_counted(service: MemoryService) -> None:
    first = await remember(service, PORT_FACT)
    again = await service.remember(
        "acme",
        None,
        Draft(
            content=PORT_FACT.replace("cluster.", "cluster"),
            memory_type="project",
            category=None,
            tags=(),
            scope="project",
        ),
    )
    assert again.already_known and again.memory.id == first
    counts = await service._counters.load("acme")
    assert counts[first].access == 1


async def test_a_reworded_fact_is_stored_not_merged(service: MemoryService) -> None:
    first = await remember(service, PORT_FACT)
    second = await remember(
        service, "Inside the cluster, port 3000 is where our API accepts connections."
    )
    assert first != second


async def test_conversation_notes_are_seen_only_by_their_conversation(
    service: MemoryService,
) -> None:
    note = await remember(
        service, "Reply to this user in French.", conversation="chat:1", scope="conversation"
    )
    project = await remember(service, PORT_FACT, conversation="chat:1")
    query = "What language should replies use?"
    mine = await service.recall("acme", "chat:1", query=query, mode="exploratory", limit=10)
    theirs = await service.recall("acme", "chat:2", query=query, mode="exploratory", limit=10)
    nobody = await service.recall("acme", None, query=query, mode="exploratory", limit=10)
    assert mine.outcome is not None
    assert note in {r.memory.id for r in mine.outcome.results}
    for other in (theirs, nobody):
        assert other.visible == 1  # only the project memory, never the other thread's note
        assert other.outcome is not None
        assert note not in {r.memory.id for r in other.outcome.results}
    listed = await service.list_memories("acme", "chat:2", memory_type=None, limit=20)
    assert [m.id for m in listed] == [project]
    assert (await service.stats("acme", "chat:2")).total == 1
    assert (await service.stats("acme", "chat:1")).total == 2
    # Another conversation cannot delete the note, nor learn it exists.
    assert not await service.forget("acme", "chat:2", memory_id=note)
    assert await service.forget("acme", "chat:1", memory_id=note)


async def test_dedup_never_points_at_another_conversations_note(service: MemoryService) -> None:
    note = await remember(service, PORT_FACT, conversation="chat:1", scope="conversation")
    answer = await service.remember(
        "acme",
        "chat:2",
        Draft(
            content=PORT_FACT,
            memory_type="project",
            category=None,
            tags=(),
            scope="project",
        ),
    )
    assert not answer.already_known and answer.memory.id != note


async def test_project_memory_records_its_conversation_as_provenance_only(
    service: MemoryService,
) -> None:
    memory_id = await remember(service, PORT_FACT, conversation="chat:9")
    [memory] = await service._vectors.get("acme", [memory_id])
    assert memory.conversation == "chat:9" and memory.scope == "project"
    assert memory.visible_to(None) and memory.visible_to("chat:other")


async def test_list_is_newest_first_and_filters_by_type(
    service: MemoryService, clock: Clock
) -> None:
    ids = []
    for i, memory_type in enumerate(["project", "pattern", "project", "reference"]):
        ids.append(
            await remember(
                service, f"Fact number {i} about topic {i * 7}.", memory_type=memory_type
            )
        )
        clock.advance(1000)
    listed = await service.list_memories("acme", None, memory_type=None, limit=20)
    assert [m.id for m in listed] == list(reversed(ids))
    projects = await service.list_memories("acme", None, memory_type="project", limit=20)
    assert [m.id for m in projects] == [ids[2], ids[0]]
    assert [m.id for m in await service.list_memories("acme", None, memory_type=None, limit=2)] == [
        ids[3],
        ids[2],
    ]


async def test_list_pages_past_other_threads_notes(service: MemoryService, pg_url: str) -> None:
    project = await remember(service, PORT_FACT)
    # 1,500 index keys of another thread's notes, all "newer" (smaller inverted time) than the
    # project memory, so the first 1,000-key page holds nothing this conversation may see.
    await insert_index_keys(
        pg_url,
        "'index/acme/0000' || lpad(g::text, 6, '0') || '#01JAAAAAAAAAAAAAAAAAAAAAAA#project"
        "#deadbeefdeadbeef'",
        1500,
    )
    listed = await service.list_memories("acme", "chat:y", memory_type=None, limit=1)
    assert [m.id for m in listed] == [project]


async def test_forget_removes_vector_and_index_key(service: MemoryService) -> None:
    memory_id = await remember(service, PORT_FACT)
    assert await service.forget("acme", None, memory_id=memory_id)
    assert await service._vectors.get("acme", [memory_id]) == []
    assert (await service.stats("acme", None)).total == 0
    assert not await service.forget("acme", None, memory_id=memory_id)


async def test_forget_of_another_tenants_id_deletes_nothing(service: MemoryService) -> None:
    memory_id = await remember(service, PORT_FACT, tenant="other")
    assert not await service.forget("acme", None, memory_id=memory_id)
    assert len(await service._vectors.get("other", [memory_id])) == 1


async def test_stats_report_a_lower_bound_past_the_scan_cap(
    service: MemoryService, pg_url: str
) -> None:
    # 10,001 index keys written directly: the cap is on keys scanned, not memories stored.
    await insert_index_keys(
        pg_url,
        "'index/acme/' || lpad(g::text, 10, '0') || '#01JAAAAAAAAAAAAAAAAAAAAAAA#pattern'",
        STATS_SCAN_CAP + 1,
    )
    stats = await service.stats("acme", None)
    assert stats.capped
    assert stats.total == STATS_SCAN_CAP
