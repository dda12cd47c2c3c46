"""The API's own share of self-healing (see shared.reconcile): remember writes the index key
first and takes it back when the vector is refused; list deletes keys it finds without a vector
once they are older than the lag; an "already known" answer restores a missing key."""

from __future__ import annotations

import pytest

from services.api.service import MemoryService
from shared.counters import COMPACTION_LAG_MS
from shared.embedding import Embedder
from shared.errors import BudgetError
from shared.model import Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.storage import Stores
from tests.tools.conftest import Clock
from tests.tools.test_service import remember

FACT = "The CI pipeline fails with error E1042 when the Node cache is stale."


async def keys_of(stores: Stores, tenant: str = "acme") -> list[str]:
    return await stores.objects.list(index_prefix(tenant))


async def test_remember_writes_key_and_vector_and_a_refused_vector_leaves_no_key(
    service: MemoryService, stores: Stores
) -> None:
    stored = await remember(service, FACT)
    assert [key.split("#")[1] for key in await keys_of(stores)] == [stored]
    # 20,001 quotes pass a length check but double in JSON: the vector store refuses them
    # before sending anything, so the key already written is taken back.
    with pytest.raises(BudgetError):
        await remember(service, '"' * 20_001)
    assert [key.split("#")[1] for key in await keys_of(stores)] == [stored]


async def test_list_deletes_a_bodiless_key_once_older_than_the_lag(
    service: MemoryService, stores: Stores, clock: Clock
) -> None:
    kept = await remember(service, FACT)
    # What a process killed between the key and the vector leaves behind.
    orphan = Memory(
        id=new_ulid(clock.now_ms), tenant="acme", content="never", created_at=iso_ms(clock.now_ms)
    )
    await stores.objects.put(index_key(orphan), "")

    listed = await service.list_memories("acme", None, memory_type=None, limit=10)
    assert [m.id for m in listed] == [kept]
    assert len(await keys_of(stores)) == 2, "younger than the lag: maybe a write in flight"
    assert (await service.stats("acme", None)).total == 2

    clock.advance(COMPACTION_LAG_MS + 1)
    listed = await service.list_memories("acme", None, memory_type=None, limit=10)
    assert [m.id for m in listed] == [kept]
    assert [key.split("#")[1] for key in await keys_of(stores)] == [kept]
    assert (await service.stats("acme", None)).total == 1


async def test_already_known_restores_the_key_an_old_order_crash_left_out(
    service: MemoryService, stores: Stores, clock: Clock, local_embedder: Embedder
) -> None:
    # 0.9 and 0.10 wrote the vector first: killed before the key, the memory was recalled and
    # answered "already known" but never listed or counted.
    lost = Memory(
        id=new_ulid(clock.now_ms), tenant="acme", content=FACT, created_at=iso_ms(clock.now_ms)
    )
    await stores.vectors.put(lost, await local_embedder.embed(FACT))
    assert await service.list_memories("acme", None, memory_type=None, limit=10) == []

    answer = await service.remember(
        "acme",
        None,
        content=FACT,
        memory_type="project",
        category=None,
        tags=(),
        scope="project",
    )

    assert answer.already_known and answer.memory.id == lost.id
    listed = await service.list_memories("acme", None, memory_type=None, limit=10)
    assert [m.id for m in listed] == [lost.id]
    assert (await service.stats("acme", None)).total == 1
    again = await service.remember(
        "acme", None, content=FACT, memory_type="project", category=None, tags=(), scope="project"
    )
    assert again.already_known and await keys_of(stores) == [index_key(lost)]
