"""S3ObjectStore behaviour the contract suite cannot reach: paging, batching and S3's own errors."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from shared.config import load_config
from shared.errors import ConflictError, StorageError
from shared.storage import ObjectStore, open_stores
from tests.fakes.aws import MakeS3Environ, seed_s3_objects
from tests.storage.s3._fault_proxy import FaultProxy, s3_error


@pytest.fixture
async def proxy(moto_s3_url: str) -> AsyncIterator[FaultProxy]:
    async with FaultProxy(moto_s3_url).running() as running:
        yield running


@pytest.fixture
async def state_bucket(make_s3_environ: MakeS3Environ) -> dict[str, str]:
    return await make_s3_environ()


@pytest.fixture
async def proxied_store(
    state_bucket: dict[str, str], proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ObjectStore]:
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", proxy.url)
    async with open_stores(load_config(state_bucket)) as stores:
        yield stores.objects


def _seed(environ: dict[str, str], keys: list[str]) -> None:
    seed_s3_objects(environ["STATE_BUCKET"], keys)


def _count(proxy: FaultProxy, *, method: str, query_key: str) -> list[int]:
    seen = [0]

    def rule(request: web.Request, _: bytes) -> None:
        if request.method == method and query_key in request.query:
            seen[0] += 1

    proxy.rules.append(rule)
    return seen


async def test_listing_follows_continuation_tokens_past_a_thousand_keys(
    proxied_store: ObjectStore, proxy: FaultProxy, state_bucket: dict[str, str]
) -> None:
    keys = [f"index/t/{i:05d}" for i in range(1150)]
    _seed(state_bucket, keys)
    await proxied_store.put("index/u/other-tenant", "")
    lists = _count(proxy, method="GET", query_key="list-type")

    listed = await proxied_store.list("index/t/", limit=5000)

    assert listed == keys
    assert lists[0] == 2  # 1000 + 150: the token was followed exactly once


async def test_listing_stops_at_the_limit_and_honours_start_after(
    proxied_store: ObjectStore, proxy: FaultProxy, state_bucket: dict[str, str]
) -> None:
    keys = [f"index/t/{i:05d}" for i in range(1150)]
    _seed(state_bucket, keys)
    lists = _count(proxy, method="GET", query_key="list-type")

    assert await proxied_store.list("index/t/", limit=1020) == keys[:1020]
    assert lists[0] == 2  # 1000, then MaxKeys=20 rather than another full page
    assert await proxied_store.list("index/t/", limit=3, start_after=keys[1100]) == keys[1101:1104]


async def test_deletes_go_in_batches_of_a_thousand(
    proxied_store: ObjectStore, proxy: FaultProxy, state_bucket: dict[str, str]
) -> None:
    keys = [f"stats/t/shard/{i:05d}.json" for i in range(1001)]
    _seed(state_bucket, keys)
    deletes = _count(proxy, method="POST", query_key="delete")

    await proxied_store.delete([*keys, "stats/t/shard/never-existed.json"])

    assert deletes[0] == 2
    assert await proxied_store.list("stats/t/") == []


async def test_empty_delete_sends_nothing(proxied_store: ObjectStore, proxy: FaultProxy) -> None:
    deletes = _count(proxy, method="POST", query_key="delete")
    await proxied_store.delete([])
    assert deletes[0] == 0


async def test_per_key_delete_errors_are_raised_with_count_first_key_and_code(
    proxied_store: ObjectStore, proxy: FaultProxy
) -> None:
    def refuse_two(request: web.Request, _: bytes) -> web.Response | None:
        if request.method != "POST" or "delete" not in request.query:
            return None
        errors = "".join(
            f"<Error><Key>{key}</Key><Code>AccessDenied</Code><Message>Access Denied</Message>"
            "</Error>"
            for key in ("stats/t/a.json", "stats/t/b.json")
        )
        body = (
            f'<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{errors}</DeleteResult>'
        )
        return web.Response(body=body.encode(), content_type="application/xml")

    proxy.rules.append(refuse_two)
    with pytest.raises(StorageError) as raised:
        await proxied_store.delete(["stats/t/a.json", "stats/t/b.json", "stats/t/c.json"])
    message = str(raised.value)
    assert "2 key(s)" in message
    assert "stats/t/a.json" in message
    assert "AccessDenied" in message


async def test_a_409_conditional_conflict_is_a_conflict(
    proxied_store: ObjectStore, proxy: FaultProxy
) -> None:
    etag = await proxied_store.put("stats/t/merged.json", "{}")
    proxy.rules.append(
        lambda request, _: (
            s3_error(409, "ConditionalRequestConflict", "try again")
            if request.method == "PUT" and "If-Match" in request.headers
            else None
        )
    )
    with pytest.raises(ConflictError) as raised:
        await proxied_store.put("stats/t/merged.json", "{}", if_match=etag)
    assert "409" in str(raised.value)


async def test_a_412_is_a_conflict_naming_the_key(proxied_store: ObjectStore) -> None:
    await proxied_store.put("stats/t/merged.json", "{}")
    with pytest.raises(ConflictError) as raised:
        await proxied_store.put("stats/t/merged.json", "{}", if_none_match=True)
    assert "412" in str(raised.value)
    assert "stats/t/merged.json" in str(raised.value)


async def test_other_s3_failures_are_storage_errors_with_code(
    proxied_store: ObjectStore, proxy: FaultProxy
) -> None:
    proxy.rules.append(lambda request, _: s3_error(403, "AccessDenied", "Access Denied"))
    with pytest.raises(StorageError) as raised:
        await proxied_store.get("stats/t/merged.json")
    assert not isinstance(raised.value, ConflictError)
    assert "AccessDenied" in str(raised.value)
    assert "GetObject" in str(raised.value)


async def test_get_sends_back_the_etag_s3_reports(proxied_store: ObjectStore) -> None:
    etag = await proxied_store.put("stats/t/merged.json", '{"ü":1}')
    stored = await proxied_store.get("stats/t/merged.json")
    assert stored is not None
    assert stored.body == '{"ü":1}'
    assert stored.etag == etag and etag.startswith('"')
