"""The memory operations against real PostgreSQL and the real local model.

Fixture texts are chosen so the outcome can be explained: a question phrased differently from
the stored fact, an unrelated question, a near-verbatim repetition (dedup) and a reworded one.
"""

from __future__ import annotations

import asyncpg

from shared.memories.listing import STATS_SCAN_CAP, ListFilter
from shared.model import Draft
from shared.operations import OperationsContext
from shared.operations import remember as remembering
from shared.operations.browse import list_page, stats
from shared.operations.forget import forget
from shared.operations.recall import recall
from tests.operations.conftest import Clock

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
    ops: OperationsContext,
    content: str,
    *,
    tenant: str = "acme",
    conversation: str | None = None,
    scope: str = "project",
    memory_type: str = "project",
) -> str:
    answer = await remembering.remember(
        ops,
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


async def test_recall_finds_a_fact_asked_about_in_other_words(ops: OperationsContext) -> None:
    port_id = await remember(ops, PORT_FACT)
    await remember(ops, DB_FACT)
    await remember(ops, STYLE_FACT)
    answer = await recall(
        ops, "acme", None, query="Which port does the API listen on?", mode="balanced", limit=5
    )
    assert answer.outcome is not None and answer.outcome.results
    assert answer.outcome.results[0].memory.id == port_id


async def test_recall_on_an_empty_tenant_says_nothing_is_stored(ops: OperationsContext) -> None:
    await remember(ops, PORT_FACT, tenant="other")
    answer = await recall(
        ops, "acme", None, query="Which port does the API listen on?", mode="balanced", limit=5
    )
    assert answer.visible == 0 and answer.outcome is None


async def test_unrelated_question_is_gated_not_answered(ops: OperationsContext) -> None:
    await remember(ops, PORT_FACT)
    await remember(ops, DB_FACT)
    answer = await recall(
        ops, "acme", None, query="What is the CEO's favourite pizza?", mode="precision", limit=3
    )
    assert answer.outcome is not None
    assert answer.outcome.results == ()
    assert answer.outcome.gated == 2


async def test_near_verbatim_repeat_is_already_known_and_counted(ops: OperationsContext) -> None:
    first = await remember(ops, PORT_FACT)
    again = await remembering.remember(
        ops,
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
    counts = await ops.counters.load("acme")
    assert counts[first].access == 1


async def test_a_reworded_fact_is_stored_not_merged(ops: OperationsContext) -> None:
    first = await remember(ops, PORT_FACT)
    second = await remember(
        ops, "Inside the cluster, port 3000 is where our API accepts connections."
    )
    assert first != second


async def test_conversation_notes_are_seen_only_by_their_conversation(
    ops: OperationsContext,
) -> None:
    note = await remember(
        ops, "Reply to this user in French.", conversation="chat:1", scope="conversation"
    )
    project = await remember(ops, PORT_FACT, conversation="chat:1")
    query = "What language should replies use?"
    mine = await recall(ops, "acme", "chat:1", query=query, mode="exploratory", limit=10)
    theirs = await recall(ops, "acme", "chat:2", query=query, mode="exploratory", limit=10)
    nobody = await recall(ops, "acme", None, query=query, mode="exploratory", limit=10)
    assert mine.outcome is not None
    assert note in {r.memory.id for r in mine.outcome.results}
    for other in (theirs, nobody):
        assert other.visible == 1  # only the project memory, never the other thread's note
        assert other.outcome is not None
        assert note not in {r.memory.id for r in other.outcome.results}
    listed = (await list_page(ops, "acme", "chat:2", match=ListFilter(), limit=20)).memories
    assert [m.id for m in listed] == [project]
    assert (await stats(ops, "acme", "chat:2")).total == 1
    assert (await stats(ops, "acme", "chat:1")).total == 2
    # Another conversation cannot delete the note, nor learn it exists.
    assert not await forget(ops, "acme", "chat:2", memory_id=note)
    assert await forget(ops, "acme", "chat:1", memory_id=note)


async def test_dedup_never_points_at_another_conversations_note(ops: OperationsContext) -> None:
    note = await remember(ops, PORT_FACT, conversation="chat:1", scope="conversation")
    answer = await remembering.remember(
        ops,
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
    ops: OperationsContext,
) -> None:
    memory_id = await remember(ops, PORT_FACT, conversation="chat:9")
    [memory] = await ops.vectors.get("acme", [memory_id])
    assert memory.conversation == "chat:9" and memory.scope == "project"
    assert memory.visible_to(None) and memory.visible_to("chat:other")


async def test_list_is_newest_first_and_filters_by_type(
    ops: OperationsContext, clock: Clock
) -> None:
    ids = []
    for i, memory_type in enumerate(["project", "pattern", "project", "reference"]):
        ids.append(
            await remember(ops, f"Fact number {i} about topic {i * 7}.", memory_type=memory_type)
        )
        clock.advance(1000)
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=20)).memories
    assert [m.id for m in listed] == list(reversed(ids))
    projects = (
        await list_page(ops, "acme", None, match=ListFilter(memory_type="project"), limit=20)
    ).memories
    assert [m.id for m in projects] == [ids[2], ids[0]]
    newest = (await list_page(ops, "acme", None, match=ListFilter(), limit=2)).memories
    assert [m.id for m in newest] == [ids[3], ids[2]]


async def test_list_pages_past_other_threads_notes(ops: OperationsContext, pg_url: str) -> None:
    project = await remember(ops, PORT_FACT)
    # 1,500 index keys of another thread's notes, all "newer" (smaller inverted time) than the
    # project memory, so the first 1,000-key page holds nothing this conversation may see.
    await insert_index_keys(
        pg_url,
        "'index/acme/0000' || lpad(g::text, 6, '0') || '#01JAAAAAAAAAAAAAAAAAAAAAAA#project"
        "#deadbeefdeadbeef'",
        1500,
    )
    listed = (await list_page(ops, "acme", "chat:y", match=ListFilter(), limit=1)).memories
    assert [m.id for m in listed] == [project]


async def test_forget_removes_vector_and_index_key(ops: OperationsContext) -> None:
    memory_id = await remember(ops, PORT_FACT)
    assert await forget(ops, "acme", None, memory_id=memory_id)
    assert await ops.vectors.get("acme", [memory_id]) == []
    assert (await stats(ops, "acme", None)).total == 0
    assert not await forget(ops, "acme", None, memory_id=memory_id)


async def test_forget_of_another_tenants_id_deletes_nothing(ops: OperationsContext) -> None:
    memory_id = await remember(ops, PORT_FACT, tenant="other")
    assert not await forget(ops, "acme", None, memory_id=memory_id)
    assert len(await ops.vectors.get("other", [memory_id])) == 1


async def test_stats_report_a_lower_bound_past_the_scan_cap(
    ops: OperationsContext, pg_url: str
) -> None:
    # 10,001 index keys written directly: the cap is on keys scanned, not memories stored.
    await insert_index_keys(
        pg_url,
        "'index/acme/' || lpad(g::text, 10, '0') || '#01JAAAAAAAAAAAAAAAAAAAAAAA#pattern'",
        STATS_SCAN_CAP + 1,
    )
    counted = await stats(ops, "acme", None)
    assert counted.capped
    assert counted.total == STATS_SCAN_CAP
