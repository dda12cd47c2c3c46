"""shared.memories on real stores: the delete order with its two ways of meeting a failed
cleanup, the keys of memories known by their index entries alone, what a request may name by
id, and the lexicon removals a compactor-side repairer writes as its own shards."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from shared.errors import InvalidInputError, StorageError
from shared.lexical.segments import LEXICON_LAYOUT, decode_shard
from shared.memories import entry_keys, memory_keys, write_memory
from shared.memories.deleting import delete_memories
from shared.memories.repair_context import RepairContext
from shared.memories.visibility import Visibility, named_memory, replaceable, versions_shown
from shared.model import DAY_MS, Memory, index_key, iso_ms, new_ulid, parse_index_key
from shared.model.keys import expiry_key_of
from shared.revisions import EMPTY, Replacements
from shared.storage.interfaces import ObjectStore, VectorStore

NOW_MS = 1_800_000_000_000


def memory(
    *,
    scope: str = "project",
    conversation: str | None = None,
    expires_ms: int | None = None,
    at_ms: int = NOW_MS,
) -> Memory:
    return Memory(
        id=new_ulid(at_ms),
        tenant="acme",
        content="The staging database is db-2.",
        scope=scope,  # type: ignore[arg-type]
        conversation=conversation,
        created_at=iso_ms(at_ms),
        expires_at=iso_ms(expires_ms) if expires_ms is not None else None,
    )


async def written(
    objects: ObjectStore, vectors: VectorStore, dim: int, memories: Sequence[Memory]
) -> None:
    for stored in memories:
        await write_memory(objects, vectors, stored, [1.0] + [0.0] * (dim - 1))


async def present(objects: ObjectStore, keys: Sequence[str]) -> list[bool]:
    return [await objects.get(key) is not None for key in keys]


async def lexicon_gone(tenant: str, ids: Sequence[str]) -> None:
    raise StorageError("the state store is unreachable")


async def test_a_forget_logs_a_failed_cleanup_and_still_deletes_the_keys(
    object_store: ObjectStore, vector_store: VectorStore, embedding_dim: int
) -> None:
    doomed = memory(expires_ms=NOW_MS + DAY_MS)
    await written(object_store, vector_store, embedding_dim, [doomed])
    keys = memory_keys(doomed)
    await delete_memories(
        object_store, vector_store, lexicon_gone, "acme", [doomed.id], keys,
        cleanup_failures_raise=False,
    )  # fmt: skip
    assert await vector_store.get("acme", [doomed.id]) == []
    assert await present(object_store, keys) == [False, False]


async def test_expiry_is_told_of_a_failed_cleanup_and_keeps_the_keys_to_repeat_it(
    object_store: ObjectStore, vector_store: VectorStore, embedding_dim: int
) -> None:
    doomed = memory()
    await written(object_store, vector_store, embedding_dim, [doomed])
    with pytest.raises(StorageError):
        await delete_memories(
            object_store, vector_store, lexicon_gone, "acme", [doomed.id], [index_key(doomed)],
            cleanup_failures_raise=True,
        )  # fmt: skip
    # The vector went first, so recall no longer finds it; the key waits for the next run.
    assert await vector_store.get("acme", [doomed.id]) == []
    assert await present(object_store, [index_key(doomed)]) == [True]


async def test_nothing_to_delete_is_no_request(
    object_store: ObjectStore, vector_store: VectorStore
) -> None:
    await delete_memories(
        object_store, vector_store, lexicon_gone, "acme", [], [], cleanup_failures_raise=True
    )


def test_entry_keys_are_the_index_key_and_the_expiry_key_of_what_expires() -> None:
    expiring, lasting = memory(expires_ms=NOW_MS + DAY_MS), memory(at_ms=NOW_MS + 1)
    entries = [parse_index_key(index_key(m)) for m in (expiring, lasting)]
    assert None not in entries
    keys = entry_keys("acme", [e for e in entries if e is not None])
    assert sorted(keys) == sorted(memory_keys(expiring) + memory_keys(lasting))


async def test_a_request_names_its_own_notes_and_project_memories_only(
    object_store: ObjectStore, vector_store: VectorStore, embedding_dim: int
) -> None:
    project = memory()
    note = memory(scope="conversation", conversation="thread-1", at_ms=NOW_MS + 1)
    expired = memory(expires_ms=NOW_MS + 10, at_ms=NOW_MS + 2)
    await written(object_store, vector_store, embedding_dim, [project, note, expired])
    now_iso = iso_ms(NOW_MS + DAY_MS)

    async def named(memory_id: str, conversation: str | None) -> Memory | None:
        return await named_memory(
            vector_store, "acme", memory_id, conversation=conversation, now_iso=now_iso
        )

    assert await named(project.id, None) == project
    assert await named(note.id, "thread-1") == note
    assert await named(note.id, "thread-2") is None
    assert await named(expired.id, None) is None
    assert await named(new_ulid(NOW_MS), None) is None


async def test_replaces_refuses_naming_the_argument_and_the_way_out(
    object_store: ObjectStore, vector_store: VectorStore, embedding_dim: int
) -> None:
    old, new = memory(), memory(at_ms=NOW_MS + 1)
    await written(object_store, vector_store, embedding_dim, [old, new])
    retired = Visibility(None, now_ms=NOW_MS + 5, replacements=Replacements([(old.id, new.id)]))
    with pytest.raises(InvalidInputError, match=f"pass replaces={new.id} to correct it"):
        await replaceable(vector_store, "acme", retired, old.id, scope="project")
    visibility = Visibility("thread-1", now_ms=NOW_MS + 5, replacements=EMPTY)
    with pytest.raises(InvalidInputError, match='use scope "project"'):
        await replaceable(vector_store, "acme", visibility, new.id, scope="conversation")
    with pytest.raises(InvalidInputError, match="is visible to this request"):
        await replaceable(vector_store, "acme", visibility, new_ulid(NOW_MS), scope="project")
    assert await replaceable(vector_store, "acme", visibility, new.id, scope="project") == new


def test_history_shows_what_the_request_sees_and_what_it_provably_saw() -> None:
    note = memory(scope="conversation", conversation="thread-1")
    forgotten = new_ulid(NOW_MS - 1)  # a version whose body is gone, replaced by the note
    chain = Replacements([(forgotten, note.id)])
    assert versions_shown(chain, {note.id: note}, "thread-1") == {note.id, forgotten}
    assert versions_shown(chain, {note.id: note}, "thread-2") == frozenset()


async def test_a_repairer_removes_lexicon_entries_as_a_shard_of_its_own(
    object_store: ObjectStore, vector_store: VectorStore
) -> None:
    context = RepairContext(
        vectors=vector_store,
        objects=object_store,
        process_id="repair-test",
        clock_ms=lambda: NOW_MS,
    )
    await context.remove_from_lexicon("acme", ["01A", "01B"])
    names = await LEXICON_LAYOUT.names(object_store, "acme", after="")
    assert len(names) == 1 and "-repair-test" in names[0]
    bodies = await LEXICON_LAYOUT.bodies(object_store, "acme", names)
    shard = decode_shard(bodies[names[0]])
    assert shard is not None and shard.remove == ["01A", "01B"]


def test_expiry_keys_are_written_first() -> None:
    expiring = memory(expires_ms=NOW_MS + DAY_MS)
    assert memory_keys(expiring) == [expiry_key_of(expiring), index_key(expiring)]
