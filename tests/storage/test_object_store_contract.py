"""The ObjectStore contract, run against every backend (see conftest.BACKENDS)."""

from __future__ import annotations

import asyncio

import pytest

from shared.errors import ConflictError, InvalidInputError
from shared.storage import ObjectStore


async def test_missing_key_reads_as_none(object_store: ObjectStore) -> None:
    assert await object_store.get("nothing/here") is None


async def test_put_then_get_returns_body_and_the_etag_put_returned(
    object_store: ObjectStore,
) -> None:
    etag = await object_store.put("stats/t/merged.json", '{"n":1}')
    stored = await object_store.get("stats/t/merged.json")
    assert stored is not None
    assert (stored.body, stored.etag) == ('{"n":1}', etag)


async def test_get_many_reads_what_get_reads_and_leaves_out_missing_keys(
    object_store: ObjectStore,
) -> None:
    keys = [f"lexicon/t/shard/{n:04d}" for n in range(450)]
    written = await asyncio.gather(*(object_store.put(key, key) for key in keys))
    etags = dict(zip(keys, written, strict=True))
    asked = [*keys, "lexicon/t/shard/gone", keys[0]]
    found = await object_store.get_many(asked)
    assert set(found) == set(keys)
    assert all((found[key].body, found[key].etag) == (key, etags[key]) for key in keys)
    assert await object_store.get_many([]) == {}


async def test_etag_alone_is_the_etag_get_returns_and_none_for_a_missing_key(
    object_store: ObjectStore,
) -> None:
    assert await object_store.etag("stats/t/merged.json") is None
    first = await object_store.put("stats/t/merged.json", '{"n":1}')
    assert await object_store.etag("stats/t/merged.json") == first
    second = await object_store.put("stats/t/merged.json", '{"n":2}')
    stored = await object_store.get("stats/t/merged.json")
    assert stored is not None and await object_store.etag("stats/t/merged.json") == second
    assert stored.etag == second != first
    await object_store.delete(["stats/t/merged.json"])
    assert await object_store.etag("stats/t/merged.json") is None


async def test_plain_put_overwrites_with_a_new_etag(object_store: ObjectStore) -> None:
    first = await object_store.put("k", "one")
    second = await object_store.put("k", "two")
    stored = await object_store.get("k")
    assert second != first
    assert stored is not None and (stored.body, stored.etag) == ("two", second)


async def test_if_match_with_the_current_etag_wins(object_store: ObjectStore) -> None:
    first = await object_store.put("k", "one")
    second = await object_store.put("k", "two", if_match=first)
    stored = await object_store.get("k")
    assert stored is not None and (stored.body, stored.etag) == ("two", second)


async def test_if_match_with_a_stale_etag_fails_and_writes_nothing(
    object_store: ObjectStore,
) -> None:
    stale = await object_store.put("k", "one")
    current = await object_store.put("k", "two")
    with pytest.raises(ConflictError):
        await object_store.put("k", "three", if_match=stale)
    stored = await object_store.get("k")
    assert stored is not None and (stored.body, stored.etag) == ("two", current)


async def test_if_match_on_a_missing_key_fails(object_store: ObjectStore) -> None:
    etag = await object_store.put("other", "x")
    with pytest.raises(ConflictError):
        await object_store.put("missing", "x", if_match=etag)
    assert await object_store.get("missing") is None


async def test_two_concurrent_compare_and_swaps_on_one_etag_exactly_one_wins(
    object_store: ObjectStore,
) -> None:
    for round_number in range(5):
        key = f"stats/t/merged-{round_number}.json"
        etag = await object_store.put(key, "base")
        outcomes = await asyncio.gather(
            object_store.put(key, "writer-a", if_match=etag),
            object_store.put(key, "writer-b", if_match=etag),
            return_exceptions=True,
        )
        winners = [i for i, outcome in enumerate(outcomes) if isinstance(outcome, str)]
        losers = [outcome for outcome in outcomes if isinstance(outcome, ConflictError)]
        assert len(winners) == 1 and len(losers) == 1, outcomes
        stored = await object_store.get(key)
        assert stored is not None
        assert stored.body == ("writer-a", "writer-b")[winners[0]]
        assert stored.etag == outcomes[winners[0]]


async def test_if_none_match_twice_the_second_fails_and_the_first_body_stays(
    object_store: ObjectStore,
) -> None:
    etag = await object_store.put("shard/1", "first", if_none_match=True)
    with pytest.raises(ConflictError):
        await object_store.put("shard/1", "second", if_none_match=True)
    stored = await object_store.get("shard/1")
    assert stored is not None and (stored.body, stored.etag) == ("first", etag)


async def test_a_stale_etag_from_a_deleted_and_recreated_key_never_wins(
    object_store: ObjectStore,
) -> None:
    old = await object_store.put("k", "before delete")
    await object_store.delete(["k"])
    new = await object_store.put("k", "recreated", if_none_match=True)
    assert new != old
    with pytest.raises(ConflictError):
        await object_store.put("k", "stale writer", if_match=old)
    stored = await object_store.get("k")
    assert stored is not None and stored.body == "recreated"


async def test_both_conditions_at_once_are_refused_by_name(object_store: ObjectStore) -> None:
    etag = await object_store.put("k", "x")
    with pytest.raises(InvalidInputError, match="if_match and if_none_match"):
        await object_store.put("k", "y", if_match=etag, if_none_match=True)


async def test_list_is_in_ascending_byte_order(object_store: ObjectStore) -> None:
    for key in ("idx/9#b", "idx/10#a", "idx/1#z", "idx/1#Z"):
        await object_store.put(key, "")
    assert await object_store.list("idx/") == ["idx/1#Z", "idx/1#z", "idx/10#a", "idx/9#b"]


async def test_list_orders_non_ascii_by_utf8_bytes(object_store: ObjectStore) -> None:
    for key in ("u/é", "u/z", "u/Z"):
        await object_store.put(key, "")
    assert await object_store.list("u/") == ["u/Z", "u/z", "u/é"]


async def test_prefixes_with_underscore_and_percent_match_literally(
    object_store: ObjectStore,
) -> None:
    for key in ("a_b/1", "axb/1", "a%c/1", "abc/1", "a%/x", "ab/1"):
        await object_store.put(key, "")
    assert await object_store.list("a_b/") == ["a_b/1"]
    assert await object_store.list("a_") == ["a_b/1"]
    assert await object_store.list("a%") == ["a%/x", "a%c/1"]
    assert await object_store.list("a%c") == ["a%c/1"]


async def test_list_pages_with_limit_and_start_after(object_store: ObjectStore) -> None:
    keys = [f"p/{n}" for n in range(1, 6)]
    for key in [*keys, "q/1", "o/9"]:
        await object_store.put(key, "")
    assert await object_store.list("p/", limit=2) == ["p/1", "p/2"]
    assert await object_store.list("p/", limit=2, start_after="p/2") == ["p/3", "p/4"]
    assert await object_store.list("p/", start_after="p/25") == ["p/3", "p/4", "p/5"]
    assert await object_store.list("p/", start_after="p/5") == []
    assert await object_store.list("p/", limit=100) == keys
    assert await object_store.list("") == ["o/9", *keys, "q/1"]


async def test_list_refuses_a_limit_below_one(object_store: ObjectStore) -> None:
    with pytest.raises(InvalidInputError, match="limit must be at least 1, got 0") as info:
        await object_store.list("p/", limit=0)
    assert info.value.field == "limit"


async def test_delete_removes_the_named_keys_and_ignores_missing_ones(
    object_store: ObjectStore,
) -> None:
    for key in ("d/1", "d/2", "d/3"):
        await object_store.put(key, "x")
    await object_store.delete(["d/1", "d/3", "d/never"])
    await object_store.delete([])
    assert await object_store.list("d/") == ["d/2"]
    assert await object_store.get("d/1") is None


async def test_pages_follow_every_page_and_stop_when_the_caller_does(
    object_store: ObjectStore,
) -> None:
    keys = [f"p/{n:02d}" for n in range(7)]
    for key in [*keys, "q/outside"]:
        await object_store.put(key, "")
    pages = [page async for page in object_store.pages("p/", page_size=3)]
    assert pages == [keys[0:3], keys[3:6], keys[6:7]]
    after = [page async for page in object_store.pages("p/", page_size=3, start_after="p/04")]
    assert after == [keys[5:7]]
    # An exact multiple of the page size ends with no empty page.
    assert [p async for p in object_store.pages("p/", page_size=7)] == [keys]
    assert [p async for p in object_store.pages("none/", page_size=3)] == []
    async for first in object_store.pages("p/", page_size=2):
        assert first == keys[0:2]
        break
