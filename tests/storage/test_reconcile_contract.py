"""The reconciler on every backend: what a killed process left half-written is repaired once it
is older than the lag, and nothing younger, or whole, is touched."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence

import pytest

from shared.lexical.segments import (
    LEXICON_LAYOUT,
    MergedLexicon,
    encode,
    passage_counts,
)
from shared.lexical.stored import lexicon_documents
from shared.memories.reconcile import Reconciler, ReconcileResult, TenantInventory, plan_reconcile
from shared.memories.repair_context import RepairContext
from shared.model import Hit, Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.storage import MemoryRef, ObjectStore, VectorStore
from shared.storage.interfaces import Embedding

LAG_MS = 60_000
NOW_MS = 1_800_000_000_000
OLD_MS = NOW_MS - 2 * LAG_MS
YOUNG_MS = NOW_MS - LAG_MS // 2


def unit(dim: int) -> list[float]:
    return [1.0 / math.sqrt(dim)] * dim


def made(tenant: str, content: str, *, at_ms: int, **fields: object) -> Memory:
    return Memory(
        id=new_ulid(at_ms),
        tenant=tenant,
        content=content,
        created_at=iso_ms(at_ms),
        **fields,  # type: ignore[arg-type]
    )


def reconciler(vectors: VectorStore, objects: ObjectStore) -> Reconciler:
    return Reconciler(
        RepairContext(
            vectors=vectors,
            objects=objects,
            process_id="reconcile-test",
            clock_ms=lambda: NOW_MS,
            lag_ms=LAG_MS,
        )
    )


async def reconcile_all(vectors: VectorStore, objects: ObjectStore) -> ReconcileResult:
    repairer = reconciler(vectors, objects)
    total = ReconcileResult()
    for tenant, (keys, ids) in (await repairer.inventory()).items():
        total += await repairer.tenant(tenant, keys, ids)
    return total


async def index_ids(objects: ObjectStore, tenant: str) -> set[str]:
    return {key.split("#")[1] for key in await objects.list(index_prefix(tenant))}


async def with_lexicon(objects: ObjectStore, tenant: str, memories: Sequence[Memory]) -> None:
    """The tenant's merged.json holding these memories, as a backfill or a fold leaves it."""
    docs = {m.id: passage_counts(m.content) for m in memories}
    await objects.put(LEXICON_LAYOUT.merged_key(tenant), encode(MergedLexicon(docs=docs)))


async def whole(vectors: VectorStore, objects: ObjectStore, memory: Memory, dim: int) -> None:
    await objects.put(index_key(memory), "")
    await vectors.put(memory, unit(dim))


async def test_a_vector_without_a_key_gets_its_key_back_and_its_lexicon_entry(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    listed = made("acme", "the cache lives in redis", at_ms=OLD_MS)
    await whole(vector_store, object_store, listed, embedding_dim)
    # As 0.9/0.10 left it when killed between the vector and the key: vector only.
    lost = made(
        "acme",
        "the fix for E1042 is clearing the node cache",
        at_ms=OLD_MS,
        memory_type="pattern",
        scope="conversation",
        conversation="chat-7",
    )
    await vector_store.put(lost, unit(embedding_dim))
    await with_lexicon(object_store, "acme", [listed])

    result = await reconcile_all(vector_store, object_store)

    assert result == ReconcileResult(keys_restored=1, lexicon_added=1)
    # The key is the one remember would have written: type and conversation digest included.
    assert index_key(lost) in await object_store.list(index_prefix("acme"))
    assert await lexicon_documents(object_store, "acme") == {listed.id, lost.id}
    assert await reconcile_all(vector_store, object_store) == ReconcileResult(), "idempotent"


async def test_a_key_without_a_vector_is_deleted_and_its_lexicon_entry_removed(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    kept = made("acme", "deploys go through the blue pool", at_ms=OLD_MS)
    await whole(vector_store, object_store, kept, embedding_dim)
    # Killed mid-remember (key written, vector never) and mid-forget (vector gone, key left).
    never_written = made("acme", "half a remember", at_ms=OLD_MS)
    half_forgotten = made("acme", "half a forget", at_ms=OLD_MS)
    await object_store.put(index_key(never_written), "")
    await object_store.put(index_key(half_forgotten), "")
    await with_lexicon(object_store, "acme", [kept, half_forgotten])

    result = await reconcile_all(vector_store, object_store)

    assert result == ReconcileResult(keys_deleted=2, lexicon_removed=1)
    assert await index_ids(object_store, "acme") == {kept.id}
    assert await lexicon_documents(object_store, "acme") == {kept.id}


async def test_nothing_younger_than_the_lag_is_touched(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    # A remember in flight in another process looks exactly like these for a moment.
    key_only = made("acme", "key written, vector on its way", at_ms=YOUNG_MS)
    vector_only = made("acme", "an old-order write in flight", at_ms=YOUNG_MS)
    await object_store.put(index_key(key_only), "")
    await vector_store.put(vector_only, unit(embedding_dim))
    await with_lexicon(object_store, "acme", [])

    assert await reconcile_all(vector_store, object_store) == ReconcileResult()
    assert await index_ids(object_store, "acme") == {key_only.id}
    assert await lexicon_documents(object_store, "acme") == set()


async def test_a_tenant_without_a_lexicon_is_left_to_its_backfill(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    lost = made("acme", "vector only", at_ms=OLD_MS)
    await vector_store.put(lost, unit(embedding_dim))

    assert await reconcile_all(vector_store, object_store) == ReconcileResult(keys_restored=1)
    # The backfill builds merged.json from the keys, which now include this memory.
    assert await lexicon_documents(object_store, "acme") is None


async def test_tenants_are_repaired_apart(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    mine = made("acme", "same words", at_ms=OLD_MS)
    theirs = made("globex", "same words", at_ms=OLD_MS)
    await vector_store.put(mine, unit(embedding_dim))
    await object_store.put(index_key(theirs), "")

    result = await reconcile_all(vector_store, object_store)

    assert result == ReconcileResult(keys_restored=1, keys_deleted=1)
    assert await index_ids(object_store, "acme") == {mine.id}
    assert await index_ids(object_store, "globex") == set()


class _ForgetDuringRepair(VectorStore):
    """The real store, with a forget of ``victim`` landing right after the reconciler's first
    read: the moment between "the vector exists" and "its key is written"."""

    def __init__(self, inner: VectorStore, victim: Memory) -> None:
        self._inner = inner
        self._victim = victim
        self.raced = False

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        await self._inner.put(memory, embedding)

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        return await self._inner.query(tenant, embedding, top_k=top_k)

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        found = await self._inner.get(tenant, ids)
        if not self.raced and self._victim.id in ids:
            self.raced = True
            await self._inner.delete(tenant, [self._victim.id])
        return found

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        await self._inner.delete(tenant, ids)

    def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        return self._inner.scan_ids()


async def test_a_forget_racing_the_repair_does_not_leave_a_key_behind(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    victim = made("acme", "forgotten while being repaired", at_ms=OLD_MS)
    await vector_store.put(victim, unit(embedding_dim))
    racing = _ForgetDuringRepair(vector_store, victim)

    result = await reconcile_all(racing, object_store)

    assert racing.raced
    assert result.keys_restored == 0
    assert await index_ids(object_store, "acme") == set()


def test_the_plan_is_every_mismatch_older_than_the_lag() -> None:
    old = [new_ulid(OLD_MS) for _ in range(5)]
    young = new_ulid(YOUNG_MS)
    keys = {i: f"index/acme/x#{i}#project" for i in (old[0], old[1], young)}
    inventory = TenantInventory(
        keys=keys, vectors={old[0], old[2], old[3], young}, lexicon={old[0], old[2], old[4]}
    )
    plan = plan_reconcile(inventory, now_ms=NOW_MS, lag_ms=LAG_MS)
    assert plan.restore_keys == tuple(sorted((old[2], old[3])))
    assert plan.delete_keys == (keys[old[1]],)
    assert plan.lexicon_add == (old[3],)
    assert plan.lexicon_remove == (old[4],)


@pytest.mark.parametrize("memory_id", ["not-a-ulid", ""])
def test_an_id_that_cannot_be_dated_is_never_repaired(memory_id: str) -> None:
    inventory = TenantInventory(
        keys={memory_id: f"index/acme/x#{memory_id}#project"}, vectors=set(), lexicon={memory_id}
    )
    assert plan_reconcile(inventory, now_ms=NOW_MS, lag_ms=LAG_MS).empty
