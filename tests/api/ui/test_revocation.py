"""The page's shared secret and revocations on each real state store (PostgreSQL's ``objects``
table and an S3 bucket): what one process writes, another reads; records are immutable and
pruned once their session would have expired anyway."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from services.api.ui.revocation import (
    REVOKED_ROOT,
    SECRET_KEY,
    Revocations,
    SessionRef,
    deployment_secret,
    revoked_key,
)
from shared.config import Config, load_config
from shared.storage import ObjectStore, open_stores
from tests.storage.conftest import BACKENDS, _environ_for


@pytest.fixture(params=BACKENDS)
def state_config(request: pytest.FixtureRequest) -> Config:
    # Synchronous, as the storage suites' own: the S3 fixtures start before any event loop.
    return load_config(_environ_for(request.param, request))


@pytest.fixture
async def state(state_config: Config) -> AsyncIterator[ObjectStore]:
    """A fresh, empty state store of each backend, as the storage contract suites open one."""
    async with open_stores(state_config) as opened:
        yield opened.objects


async def test_every_process_derives_one_secret_and_a_new_key_another(
    state: ObjectStore,
) -> None:
    first = await deployment_secret(state, "key-1")
    assert await state.get(SECRET_KEY) is not None
    assert await deployment_secret(state, "key-1") == first
    assert await deployment_secret(state, "key-2") != first


async def test_a_revocation_reaches_another_process_and_is_pruned_after_expiry(
    state: ObjectStore,
) -> None:
    now = int(time.time())
    mine = SessionRef(nonce="n-mine", expires_s=now + 3600)
    theirs = SessionRef(nonce="n-theirs", expires_s=now + 3600)
    long_gone = SessionRef(nonce="n-old", expires_s=now - 10)
    here, elsewhere = Revocations(state), Revocations(state, cache_s=0)
    assert not await elsewhere.revoked(mine)
    await here.revoke(long_gone)
    await here.revoke(mine)
    await here.revoke(mine)  # twice: the record is immutable, the second is a no-op
    assert await here.revoked(mine) and await elsewhere.revoked(mine)
    assert not await elsewhere.revoked(theirs)
    # The expired record went with the next sign-out; the live one stays.
    assert await state.list(REVOKED_ROOT) == [revoked_key(mine)]
