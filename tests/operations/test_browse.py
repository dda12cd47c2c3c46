"""What the memory page reads through the operations, against real PostgreSQL and the local
model: the list with every filter and a cursor (the walk list_memories makes), the tenants, the
export, and a search that counts no use."""

from __future__ import annotations

import pytest

from shared.errors import InvalidInputError
from shared.memories import listing
from shared.memories.listing import ListFilter
from shared.model import Draft, parse_iso_ms
from shared.operations import OperationsContext
from shared.operations.browse import (
    access_counts,
    browse,
    export,
    list_page,
    tenants,
)
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
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=3)).memories
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


async def test_list_page_hands_on_a_cursor_until_the_walk_is_complete(
    ops: OperationsContext, clock: Clock
) -> None:
    newest_first = await seeded(ops, clock)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await list_page(ops, "acme", None, match=ListFilter(), limit=2, cursor=cursor)
        seen += [m.id for m in page.memories]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    # Five memories in pages of two: the third page knows it is the last without a fourth call.
    assert seen == newest_first and pages == 3


async def test_memories_written_during_a_walk_never_shift_it(
    ops: OperationsContext, clock: Clock
) -> None:
    newest_first = await seeded(ops, clock)
    first = await list_page(ops, "acme", None, match=ListFilter(), limit=2)
    await store(ops, "Written while the list was being read.", clock=clock)
    rest = await list_page(
        ops, "acme", None, match=ListFilter(), limit=10, cursor=first.next_cursor
    )
    assert [m.id for m in first.memories + rest.memories] == newest_first


async def test_stored_after_and_before_bound_the_walk(ops: OperationsContext, clock: Clock) -> None:
    newest_first = await seeded(ops, clock)  # stored one second apart
    times = {
        m.id: m.created_at
        for m in (await browse(ops, "acme", None, match=ListFilter(), limit=9)).memories
    }
    middle = parse_iso_ms(times[newest_first[2]])
    assert middle is not None
    after = ListFilter(stored_after=middle)
    assert [m.id for m in (await browse(ops, "acme", None, match=after, limit=9)).memories] == (
        newest_first[:3]  # at or after: the middle one too
    )
    before = ListFilter(stored_before=middle)
    assert [m.id for m in (await browse(ops, "acme", None, match=before, limit=9)).memories] == (
        newest_first[3:]  # before: the middle one not
    )
    window = ListFilter(stored_after=middle - 1000, stored_before=middle + 1000, tag="ops")
    page = await list_page(ops, "acme", None, match=window, limit=9)
    assert [m.id for m in page.memories] == [newest_first[2]] and page.next_cursor is None


async def test_dates_out_of_order_and_a_foreign_cursor_are_refused_by_name(
    ops: OperationsContext, clock: Clock
) -> None:
    await seeded(ops, clock)
    with pytest.raises(InvalidInputError) as refused:
        ListFilter(stored_after=2_000, stored_before=1_000)
    assert refused.value.field == "stored_after" and "earlier than `stored_before`" in str(
        refused.value
    )
    page = await list_page(ops, "acme", None, match=ListFilter(tag="ops"), limit=1)
    assert page.next_cursor is not None
    with pytest.raises(InvalidInputError) as refused:
        await list_page(
            ops, "acme", None, match=ListFilter(tag="db"), limit=1, cursor=page.next_cursor
        )
    assert refused.value.field == "cursor" and "differ in `tag`" in str(refused.value)
    for bad in ("not-a-cursor", "A" * 2000, page.next_cursor[:-4]):
        with pytest.raises(InvalidInputError) as refused:
            await list_page(ops, "acme", None, match=ListFilter(tag="ops"), limit=1, cursor=bad)
        assert refused.value.field == "cursor"
