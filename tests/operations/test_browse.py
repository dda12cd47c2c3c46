"""What the memory page reads through the operations, against real PostgreSQL and the local
model: the list with every filter and a cursor (the walk list_memories makes), the tenants, the
export, and a search that counts no use."""

from __future__ import annotations

import pytest

from shared.memories import listing
from shared.memories.listing import ListFilter
from shared.model import Draft
from shared.operations import OperationsContext
from shared.operations.browse import access_counts, browse, export, list_memories, tenants
from shared.operations.recall import recall
from shared.operations.remember import remember
from tests.operations.conftest import Clock


async def store(
    ops: OperationsContext,
    content: str,
    *,
    clock: Clock,
    tenant: str = "acme",
    category: str | None = None,
    tags: tuple[str, ...] = (),
    conversation: str | None = None,
) -> str:
    clock.advance(1000)  # one second apart: the order is the order stored
    answer = await remember(
        ops,
        tenant,
        conversation,
        Draft(
            content=content,
            memory_type="project",
            category=category,
            tags=tags,
            scope="conversation" if conversation else "project",
        ),
    )
    assert not answer.already_known
    return answer.memory.id


FACTS = (
    ("The API listens on port 3000.", "decision", ("ops",)),
    ("Deploys run with make deploy ENV=prod.", "command", ("deploy",)),
    ("The database is PostgreSQL 16 with pgvector.", "decision", ("db", "ops")),
    ("Python is formatted with ruff, line length 100.", "convention", ()),
    ("Secrets live in the cluster's sealed secrets.", "decision", ("ops",)),
)


async def seeded(ops: OperationsContext, clock: Clock) -> list[str]:
    """The facts' ids, newest first."""
    ids = [
        await store(ops, content, clock=clock, category=category, tags=tags)
        for content, category, tags in FACTS
    ]
    return ids[::-1]


async def test_a_cursor_pages_through_every_memory_once_newest_first(
    ops: OperationsContext, clock: Clock
) -> None:
    newest_first = await seeded(ops, clock)
    seen: list[str] = []
    before = None
    while True:
        page = await browse(ops, "acme", None, match=ListFilter(), limit=2, before=before)
        if not page.memories:
            break
        seen += [m.id for m in page.memories]
        before = page.memories[-1].id
    assert seen == newest_first
    # list_memories is the same walk without a cursor.
    listed = await list_memories(ops, "acme", None, memory_type=None, limit=3)
    assert [m.id for m in listed] == newest_first[:3]


async def test_category_and_tag_filter_by_the_body(ops: OperationsContext, clock: Clock) -> None:
    newest_first = await seeded(ops, clock)
    decisions = await browse(ops, "acme", None, match=ListFilter(category="decision"), limit=10)
    assert [m.id for m in decisions.memories] == [newest_first[0], newest_first[2], newest_first[4]]
    both = await browse(
        ops, "acme", None, match=ListFilter(tag="ops", category="decision"), limit=2
    )
    assert [m.id for m in both.memories] == [newest_first[0], newest_first[2]]
    after = await browse(
        ops, "acme", None, match=ListFilter(tag="ops"), limit=10, before=newest_first[2]
    )
    assert [m.id for m in after.memories] == [newest_first[4]]


async def test_notes_only_shows_the_asking_conversations_notes(
    ops: OperationsContext, clock: Clock
) -> None:
    await seeded(ops, clock)
    mine = await store(ops, "We call the release Tangerine.", clock=clock, conversation="c1")
    await store(ops, "Their release is called Plum.", clock=clock, conversation="c2")
    notes = ListFilter(notes_only=True)
    assert [m.id for m in (await browse(ops, "acme", "c1", match=notes, limit=10)).memories] == [
        mine
    ]
    assert (await browse(ops, "acme", None, match=notes, limit=10)).memories == []


async def test_a_body_filter_stops_at_its_scan_cap_and_says_where(
    ops: OperationsContext, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Five memories stand in for the thousands the cap is for: bodies two at a time, two read.
    monkeypatch.setattr(listing, "BODY_BATCH", 2)
    monkeypatch.setattr(listing, "BODY_SCAN_CAP", 2)
    newest_first = await seeded(ops, clock)
    match = ListFilter(category="command")
    first = await browse(ops, "acme", None, match=match, limit=1)
    assert first.memories == [] and first.resume_after == newest_first[1]
    rest = await browse(ops, "acme", None, match=match, limit=1, before=first.resume_after)
    assert [m.id for m in rest.memories] == [newest_first[3]]
    assert rest.resume_after is None


async def test_tenants_are_listed_one_listing_each_in_key_order(
    ops: OperationsContext, clock: Clock
) -> None:
    # Keys of "t-2" and "t.x" sort before "t/..." ('-' and '.' before '/'), "t0" after: the
    # jump past each tenant's keys skips none of them.
    for tenant in ("t0", "t.x", "t", "t-2"):
        await store(ops, f"A fact that belongs to {tenant}.", clock=clock, tenant=tenant)
    assert await tenants(ops, limit=10) == ["t-2", "t.x", "t", "t0"]
    assert await tenants(ops, limit=2) == ["t-2", "t.x"]


async def test_export_is_the_whole_tenant_newest_first(
    ops: OperationsContext, clock: Clock
) -> None:
    newest_first = await seeded(ops, clock)
    await store(ops, "A note of one conversation.", clock=clock, conversation="c1")
    records = [record async for record in export(ops, "acme")]
    assert [r.id for r in records][1:] == newest_first
    assert records[0].scope == "conversation"


async def test_a_search_that_counts_no_use_leaves_the_counts_alone(
    ops: OperationsContext, clock: Clock
) -> None:
    await seeded(ops, clock)
    answer = await recall(
        ops, "acme", None, query="port 3000", mode="balanced", limit=3, count_use=False
    )
    assert answer.outcome is not None and answer.outcome.results
    assert all(count.access == 0 for count in (await access_counts(ops, "acme")).values())
    await recall(ops, "acme", None, query="port 3000", mode="balanced", limit=3)
    counted = await access_counts(ops, "acme")
    strong = [r.memory.id for r in answer.outcome.results if r.strong]
    assert all(counted[memory_id].access == 1 for memory_id in strong)
