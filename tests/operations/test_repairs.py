"""The API's own share of self-healing (see shared.memories.reconcile): remember writes the index
key first and takes it back when the vector is refused; list deletes keys it finds without a vector
once they are older than the lag; an "already known" answer restores a missing key."""

from __future__ import annotations

import pytest

from shared.counters import COMPACTION_LAG_MS
from shared.embedding import Embedder
from shared.errors import BudgetError
from shared.memories.forgetting import RECHECK_MS, ForgetJournal, record_prefix
from shared.memories.listing import ListFilter
from shared.memories.selection import ForgetFilter
from shared.model import Draft, Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.operations import OperationsContext
from shared.operations import remember as remembering
from shared.operations.browse import list_page, stats
from shared.operations.forget import forget_matching
from shared.storage import Stores
from tests.operations.conftest import Clock
from tests.operations.test_operations import remember

FACT = "The CI pipeline fails with error E1042 when the Node cache is stale."


async def keys_of(stores: Stores, tenant: str = "acme") -> list[str]:
    return await stores.objects.list(index_prefix(tenant))


async def test_remember_writes_key_and_vector_and_a_refused_vector_leaves_no_key(
    ops: OperationsContext, stores: Stores
) -> None:
    stored = await remember(ops, FACT)
    assert [key.split("#")[1] for key in await keys_of(stores)] == [stored]
    # 20,001 quotes pass a length check but double in JSON: the vector store refuses them
    # before sending anything, so the key already written is taken back.
    with pytest.raises(BudgetError):
        await remember(ops, '"' * 20_001)
    assert [key.split("#")[1] for key in await keys_of(stores)] == [stored]


async def test_list_deletes_a_bodiless_key_once_older_than_the_lag(
    ops: OperationsContext, stores: Stores, clock: Clock
) -> None:
    kept = await remember(ops, FACT)
    # What a process killed between the key and the vector leaves behind.
    orphan = Memory(
        id=new_ulid(clock.now_ms), tenant="acme", content="never", created_at=iso_ms(clock.now_ms)
    )
    await stores.objects.put(index_key(orphan), "")

    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories
    assert [m.id for m in listed] == [kept]
    assert len(await keys_of(stores)) == 2, "younger than the lag: maybe a write in flight"
    assert (await stats(ops, "acme", None)).total == 2

    clock.advance(COMPACTION_LAG_MS + 1)
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories
    assert [m.id for m in listed] == [kept]
    assert [key.split("#")[1] for key in await keys_of(stores)] == [kept]
    assert (await stats(ops, "acme", None)).total == 1


async def test_already_known_restores_the_key_an_old_order_crash_left_out(
    ops: OperationsContext, stores: Stores, clock: Clock, local_embedder: Embedder
) -> None:
    # 0.9 and 0.10 wrote the vector first: killed before the key, the memory was recalled and
    # answered "already known" but never listed or counted.
    lost = Memory(
        id=new_ulid(clock.now_ms), tenant="acme", content=FACT, created_at=iso_ms(clock.now_ms)
    )
    await stores.vectors.put(lost, await local_embedder.embed(FACT))
    assert (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories == []

    answer = await remembering.remember(
        ops,
        "acme",
        None,
        Draft(content=FACT, memory_type="project", category=None, tags=(), scope="project"),
    )

    assert answer.already_known and answer.memory.id == lost.id
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories
    assert [m.id for m in listed] == [lost.id]
    assert (await stats(ops, "acme", None)).total == 1
    again = await remembering.remember(
        ops,
        "acme",
        None,
        Draft(content=FACT, memory_type="project", category=None, tags=(), scope="project"),
    )
    assert again.already_known and await keys_of(stores) == [index_key(lost)]


SCRATCH = [
    f"Scratch note {n}: the flaky test number {n} was retried on runner {n * 7}." for n in range(5)
]
KEPT = ["Releases are cut on Thursdays.", "The staging database is Postgres 16."]


async def remember_in(ops: OperationsContext, content: str, category: str | None) -> str:
    answer = await remembering.remember(
        ops,
        "acme",
        None,
        Draft(content=content, memory_type="project", category=category, tags=(), scope="project"),
    )
    return answer.memory.id


async def test_a_bulk_forget_killed_after_the_vectors_is_hidden_at_once_and_finished_after_the_lag(
    ops: OperationsContext, stores: Stores, clock: Clock
) -> None:
    """Issue 29: a kill -9 between a bulk forget's vectors and its keys left 1,000 keys that
    stats counted, list skipped 30 at a time, and the same forget could not reach (their
    bodies, which the category is read from, were gone)."""
    scratch = [await remember_in(ops, text, "scratch") for text in SCRATCH]
    kept = [await remember_in(ops, text, None) for text in KEPT]
    assert (await stats(ops, "acme", None)).total == 7

    # What the killed process left: its record of the forget, the vectors of three memories
    # deleted, their index keys still there.
    interrupted = scratch[:3]
    keys = [k for k in await keys_of(stores) if k.split("#")[1] in interrupted]
    killed = ForgetJournal(stores.objects, clock_ms=clock, lag_ms=COMPACTION_LAG_MS)
    await killed.begin("acme", interrupted, keys)
    await stores.vectors.delete("acme", interrupted)
    assert len(await keys_of(stores)) == 7

    # Another process's crash is seen once this one's "no forget running" is due for a recheck
    # (a restarted API has nothing cached), and then stats, list and the forget agree.
    clock.advance(RECHECK_MS)
    assert (await stats(ops, "acme", None)).total == 4
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories
    assert {m.id for m in listed} == set(scratch[3:] + kept)
    counted = await forget_matching(
        ops, "acme", None, match=ForgetFilter(category="scratch"), confirm=False
    )
    assert counted.matched == 2

    # Younger than the lag the record may be a forget still running elsewhere: only read.
    assert len(await keys_of(stores)) == 7
    clock.advance(COMPACTION_LAG_MS)
    assert (await stats(ops, "acme", None)).total == 4
    assert {k.split("#")[1] for k in await keys_of(stores)} == set(scratch[3:] + kept)
    assert await stores.objects.list(record_prefix("acme")) == []

    done = await forget_matching(
        ops, "acme", None, match=ForgetFilter(category="scratch"), confirm=True
    )
    assert (done.matched, done.deleted) == (2, 2)
    assert {k.split("#")[1] for k in await keys_of(stores)} == set(kept)
    assert (await stats(ops, "acme", None)).total == 2
    assert await stores.objects.list(record_prefix("acme")) == [], "a finished forget's record"


async def test_a_forget_whose_keys_fail_to_delete_is_finished_by_a_later_reader(
    ops: OperationsContext, stores: Stores, clock: Clock
) -> None:
    """The record stays when the forget cannot finish, and a reader past the lag finishes it;
    repeating the deletes of a finished part is harmless."""
    gone = await remember_in(ops, SCRATCH[0], None)
    kept = await remember_in(ops, KEPT[0], None)
    key = next(k for k in await keys_of(stores) if gone in k)
    stalled = ForgetJournal(stores.objects, clock_ms=clock, lag_ms=COMPACTION_LAG_MS)
    await stalled.begin("acme", [gone], [key])  # killed before anything was deleted
    assert (await stats(ops, "acme", None)).total == 1
    clock.advance(COMPACTION_LAG_MS + 1)
    listed = (await list_page(ops, "acme", None, match=ListFilter(), limit=10)).memories
    assert [m.id for m in listed] == [kept]
    assert await stores.vectors.get("acme", [gone]) == []
    assert [k.split("#")[1] for k in await keys_of(stores)] == [kept]
