"""The expiry job on real stores: what is due is deleted with its keys, records and lexicon
entry; what is not yet due, and what the expired memory corrected, stay."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from shared.lexical.segments import LEXICON_LAYOUT, decode_shard
from shared.memories.expiry import Expirer, ExpiryResult, due_entries
from shared.memories.repair_context import RepairContext
from shared.model import Memory, index_key, iso_ms, new_ulid, parse_iso_ms
from shared.model.keys import expiry_key_of, link_key, replaced_key
from shared.storage.interfaces import ObjectStore, VectorStore
from tests.counters._faults import Clock

START_MS = 1_800_000_000_000
DAY_MS = 86_400_000


def memory(tenant: str, *, expires_ms: int | None, content: str = "a fact") -> Memory:
    return Memory(
        id=new_ulid(START_MS),
        tenant=tenant,
        content=content,
        created_at=iso_ms(START_MS),
        expires_at=iso_ms(expires_ms) if expires_ms is not None else None,
    )


def unit(dim: int) -> list[float]:
    return [1.0] + [0.0] * (dim - 1)


async def write(
    vectors: VectorStore, objects: ObjectStore, dim: int, memories: Sequence[Memory]
) -> None:
    """What remember writes for each memory: the vector, its index key and its expiry key."""
    for stored in memories:
        await vectors.put(stored, unit(dim))
        await objects.put(index_key(stored), "")
        key = expiry_key_of(stored)
        if key is not None:
            await objects.put(key, "")


def expirer(vectors: VectorStore, objects: ObjectStore, clock: Clock) -> Expirer:
    return Expirer(
        RepairContext(vectors=vectors, objects=objects, process_id="expiry-test", clock_ms=clock)
    )


async def exists(objects: ObjectStore, key: str) -> bool:
    return await objects.get(key) is not None


async def test_a_run_deletes_what_is_due_and_keeps_the_rest(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    expired = memory("acme", expires_ms=START_MS + DAY_MS, content="staging is frozen")
    kept = memory("acme", expires_ms=START_MS + 30 * DAY_MS, content="release train")
    lasting = memory("acme", expires_ms=None, content="the repo uses pnpm")
    other = memory("beta", expires_ms=START_MS + 2 * DAY_MS, content="beta's temporary note")
    await write(vector_store, object_store, embedding_dim, [expired, kept, lasting, other])
    older, newer = new_ulid(START_MS - 1), new_ulid(START_MS + 1)
    # The expired memory corrected `older`, and `newer` corrected it.
    corrected = replaced_key("acme", older, expired.id)
    correction = replaced_key("acme", expired.id, newer)
    await object_store.put(corrected, "", if_none_match=True)
    await object_store.put(correction, "", if_none_match=True)

    clock = Clock(START_MS + 3 * DAY_MS)
    result = await expirer(vector_store, object_store, clock).run()

    assert result == ExpiryResult(tenants=2, tenants_failed=0, deleted=2, due=2)
    assert {m.id for m in await vector_store.get("acme", [expired.id, kept.id, lasting.id])} == {
        kept.id,
        lasting.id,
    }
    assert await vector_store.get("beta", [other.id]) == []
    for gone in (expired, other):
        assert not await exists(object_store, index_key(gone))
        gone_expiry = expiry_key_of(gone)
        assert gone_expiry is not None and not await exists(object_store, gone_expiry)
    assert not await exists(object_store, correction)
    assert await exists(object_store, corrected)  # `older` stays retired
    kept_expiry = expiry_key_of(kept)
    assert kept_expiry is not None and await exists(object_store, kept_expiry)
    assert await exists(object_store, index_key(kept))
    assert await exists(object_store, index_key(lasting))

    for tenant, removed in (("acme", expired), ("beta", other)):
        shard_keys = await object_store.list(LEXICON_LAYOUT.shard_prefix(tenant))
        assert len(shard_keys) == 1
        stored = await object_store.get(shard_keys[0])
        assert stored is not None
        shard = decode_shard(stored.body)
        assert shard is not None and shard.remove == [removed.id] and shard.add == {}

    assert await due_entries(object_store, now_ms=clock()) == []
    again = await expirer(vector_store, object_store, clock).run()
    assert again == ExpiryResult(tenants=0, tenants_failed=0, deleted=0, due=0)
    assert len(await object_store.list(LEXICON_LAYOUT.shard_prefix("acme"))) == 1


async def test_nothing_is_due_before_the_expiry(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    soon = memory("acme", expires_ms=START_MS + DAY_MS)
    await write(vector_store, object_store, embedding_dim, [soon])
    clock = Clock(START_MS + DAY_MS - 1)
    assert await expirer(vector_store, object_store, clock).run() == ExpiryResult()
    assert [m.id for m in await vector_store.get("acme", [soon.id])] == [soon.id]
    clock.advance(1)  # due at its own millisecond
    assert (await expirer(vector_store, object_store, clock).run()).deleted == 1
    assert await vector_store.get("acme", [soon.id]) == []


async def test_the_expiry_key_of_a_forgotten_memory_is_cleaned_up(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    forgotten = memory("acme", expires_ms=START_MS + DAY_MS)
    await write(vector_store, object_store, embedding_dim, [forgotten])
    successor = new_ulid(START_MS + 1)
    record = replaced_key("acme", forgotten.id, successor)
    await object_store.put(record, "", if_none_match=True)
    # forget deleted the vector and the index key, and left the expiry key behind.
    await vector_store.delete("acme", [forgotten.id])
    await object_store.delete([index_key(forgotten)])

    clock = Clock(START_MS + 2 * DAY_MS)
    result = await expirer(vector_store, object_store, clock).run()

    assert result == ExpiryResult(tenants=1, tenants_failed=0, deleted=0, due=1)
    key = expiry_key_of(forgotten)
    assert key is not None and not await exists(object_store, key)
    assert not await exists(object_store, record)
    assert await object_store.list(LEXICON_LAYOUT.shard_prefix("acme")) == []
    assert await expirer(vector_store, object_store, clock).run() == ExpiryResult()


async def test_an_expired_memory_on_a_stored_cycle_takes_its_record_of_the_cycle_along(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    # Y → Z → Y, as an import that did not check its links could store it; Y expires.
    expired = memory("acme", expires_ms=START_MS + DAY_MS)
    partner = new_ulid(START_MS + 1)
    await write(vector_store, object_store, embedding_dim, [expired])
    leaving, returning = (
        replaced_key("acme", expired.id, partner),
        replaced_key("acme", partner, expired.id),
    )
    for key in (leaving, returning):
        await object_store.put(key, "", if_none_match=True)

    result = await expirer(vector_store, object_store, Clock(START_MS + 2 * DAY_MS)).run()

    assert result.deleted == 1
    # Void or not, the record naming it as the replaced one is its own and goes with it.
    assert not await exists(object_store, leaving)
    assert await exists(object_store, returning)


async def test_an_expired_memory_takes_its_probable_update_links_along(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    """The links naming it as the older memory go with it (undone or not); a link naming it as
    the newer one stays, and names nothing visible from then on."""
    expired = memory("acme", expires_ms=START_MS + DAY_MS, content="the port is 8080")
    await write(vector_store, object_store, embedding_dim, [expired])
    older, newer = new_ulid(START_MS - 1), new_ulid(START_MS + 1)
    going = [
        link_key("acme", expired.id, newer, "supersedes"),
        link_key("acme", expired.id, newer, "kept"),
    ]
    staying = link_key("acme", older, expired.id, "supersedes")
    for key in [*going, staying]:
        await object_store.put(key, "", if_none_match=True)

    await expirer(vector_store, object_store, Clock(START_MS + 3 * DAY_MS)).run()

    assert [await exists(object_store, key) for key in going] == [False, False]
    assert await exists(object_store, staying)


async def test_a_memory_stored_with_an_expiry_in_another_iso_form_is_deleted_when_due(
    vector_store: VectorStore, object_store: ObjectStore, embedding_dim: int
) -> None:
    # Issue 42, item 8: as an import stored them before it parsed them: the basic format and
    # an offset, both a day before the run. Compared as text, neither was ever due.
    basic = memory("acme", expires_ms=None, content="the audit window is open")
    tokyo = memory("acme", expires_ms=None, content="the Tokyo office is closed")
    for stored, written in ((basic, "20270115T080000Z"), (tokyo, "2027-01-15T17:00:00+09:00")):
        msgspec.structs.force_setattr(stored, "expires_at", written)
    await write(vector_store, object_store, embedding_dim, [basic, tokyo])

    clock = Clock(parse_iso_ms("2027-01-16T08:00:00Z") or 0)
    result = await expirer(vector_store, object_store, clock).run()

    assert result == ExpiryResult(tenants=1, tenants_failed=0, deleted=2, due=2)
    assert await vector_store.get("acme", [basic.id, tokyo.id]) == []
