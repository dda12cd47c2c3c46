"""An ``expires_at`` written in any ISO-8601 form (an offset, the basic format, a week date) is
one time for every reader (issue 42, item 8): import parses it once and stores the canonical
UTC form, and a memory an older import stored as written is read through the same parser, so
recall, memory_get, list, stats and export agree. Real processes and stores, on PostgreSQL and
on S3 (moto and the S3 Vectors fake), with the local model."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shared.config import load_config
from shared.embedding import Embedder
from shared.memories import write_memory
from shared.memories.listing import ListFilter
from shared.model import Memory, index_key, iso_ms, new_ulid
from shared.operations import OperationsContext
from shared.operations.browse import list_page, stats
from shared.operations.history import get
from shared.operations.recall import recall
from shared.storage import Stores, open_stores
from tests.operator.test_transfer import (  # the fixtures are registered here by name
    TENANT,
    cli,
    embedder,  # noqa: F401
    memory_service,
    postgres_env,  # noqa: F401
    s3_env,  # noqa: F401
    write_lines,
)

HOUR_MS = 3_600_000
TOKYO = timezone(timedelta(hours=9))
NEW_YORK = timezone(timedelta(hours=-5))
CONTENTS = {
    "tokyo": "The Tokyo office coffee machine is broken until the technician comes.",
    "new_york": "The New York staging cluster runs the canary build this afternoon.",
    "basic": "The quarterly audit window for the billing ledger is open.",
    "week": "The release train for the mobile app leaves on the week's Wednesday.",
    "never": "Service logs are kept for thirty days in the central bucket.",
}


@pytest.fixture(params=["postgres", "s3"])
def store_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    if request.param == "postgres":
        env: dict[str, str] = request.getfixturevalue("postgres_env")()
    else:
        env = request.getfixturevalue("s3_env")
    for key, value in env.items():  # for the stores this test opens itself
        monkeypatch.setenv(key, value)
    return env


def stamp(ms: int, zone: timezone) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=zone).isoformat()


def expiries(now_ms: int) -> dict[str, str | None]:
    """Each memory's expiry as a client might write it: Tokyo's offset an hour ago, New York's
    in three hours, the basic format a day ago, an ISO week date two weeks ahead, and none."""
    week = datetime.fromtimestamp(now_ms / 1000, tz=UTC) + timedelta(days=14)
    year, number, day = week.isocalendar()
    return {
        "tokyo": stamp(now_ms - HOUR_MS, TOKYO),
        "new_york": stamp(now_ms + 3 * HOUR_MS, NEW_YORK),
        "basic": datetime.fromtimestamp(now_ms / 1000 - 86_400, tz=UTC).strftime("%Y%m%dT%H%M%SZ"),
        "week": f"{year}-W{number:02d}-{day}",
        "never": None,
    }


LIVE = {"new_york", "week", "never"}


@pytest.fixture
async def stores_of(store_env: dict[str, str]) -> AsyncIterator[Stores]:
    async with open_stores(load_config({**store_env, "EMBEDDING_PROVIDER": "local"})) as stores:
        yield stores


async def seen_by_every_reader(
    env: dict[str, str], ops: OperationsContext, ids: dict[str, str]
) -> dict[str, set[str]]:
    """Which of ``ids`` (by name) each reader shows: get, recall, list, stats and export."""
    got = {name for name, i in ids.items() if await get(ops, TENANT, None, memory_id=i)}
    recalled: set[str] = set()
    for content in CONTENTS.values():
        answer = await recall(ops, TENANT, None, query=content, mode="balanced", limit=10)
        found = {r.memory.id for r in answer.outcome.results} if answer.outcome else set()
        recalled |= {n for n, i in ids.items() if i in found}
    listed = {
        m.id for m in (await list_page(ops, TENANT, None, match=ListFilter(), limit=50)).memories
    }
    counted = await stats(ops, TENANT, None)
    code, out, err = await cli("export", "--tenant", TENANT, env=env)
    assert code == 0, err
    exported = {json.loads(line)["id"] for line in out.splitlines()}
    return {
        "get": got,
        "recall": recalled,
        "list": {n for n, i in ids.items() if i in listed},
        "stats": {str(counted.total)},
        "export": {n for n, i in ids.items() if i in exported},
    }


async def test_an_import_in_any_iso_form_expires_at_the_same_instant_for_every_reader(
    store_env: dict[str, str],
    stores_of: Stores,
    embedder: Embedder,  # noqa: F811
    tmp_path: Path,
) -> None:
    now_ms = time.time_ns() // 1_000_000
    ids: dict[str, str] = {}
    lines: list[dict[str, Any]] = []
    for n, (name, expires_at) in enumerate(expiries(now_ms).items()):
        ids[name] = new_ulid(now_ms - 10 * HOUR_MS + n)
        line = {"id": ids[name], "tenant": TENANT, "content": CONTENTS[name]}
        line["created_at"] = iso_ms(now_ms - 10 * HOUR_MS + n)
        if expires_at is not None:
            line["expires_at"] = expires_at
        lines.append(line)
    code, _, err = await cli(
        "import", "--input", str(write_lines(tmp_path / "in.jsonl", lines)), env=store_env
    )
    assert code == 0, err
    config = load_config({**store_env, "EMBEDDING_PROVIDER": "local"})
    ops = memory_service(stores_of, embedder, config)
    seen = await seen_by_every_reader(store_env, ops, ids)
    assert seen == {
        "get": LIVE,
        "recall": LIVE,
        "list": LIVE,
        "stats": {str(len(LIVE))},
        "export": LIVE,
    }
    # Stored in the one form: what was expired an hour ago in Tokyo reads as that UTC instant.
    stored = {m.id: m for m in await stores_of.vectors.get(TENANT, list(ids.values()))}
    assert stored[ids["tokyo"]].expires_at == iso_ms(now_ms - HOUR_MS)
    assert stored[ids["new_york"]].expires_at == iso_ms(now_ms + 3 * HOUR_MS)
    code, out, err = await cli("export", "--tenant", TENANT, env=store_env)
    assert code == 0, err
    assert {r["id"]: r.get("expires_at") for r in map(json.loads, out.splitlines())} == {
        ids["new_york"]: iso_ms(now_ms + 3 * HOUR_MS),
        ids["week"]: stored[ids["week"]].expires_at,
        ids["never"]: None,
    }


async def test_memories_stored_in_another_form_are_read_through_the_same_parser(
    store_env: dict[str, str],
    stores_of: Stores,
    embedder: Embedder,  # noqa: F811
) -> None:
    """As an import before this fix stored them: the metadata holds the value as written."""
    now_ms = time.time_ns() // 1_000_000
    ids: dict[str, str] = {}
    vector = (await embedder.embed_many(["x"]))[0]
    for n, (name, expires_at) in enumerate(expiries(now_ms).items()):
        ids[name] = new_ulid(now_ms - 10 * HOUR_MS + n)
        memory = Memory(
            id=ids[name],
            tenant=TENANT,
            content=CONTENTS[name],
            created_at=iso_ms(now_ms - 10 * HOUR_MS + n),
        )
        if expires_at is not None:
            msgspec.structs.force_setattr(memory, "expires_at", expires_at)
        await write_memory(stores_of.objects, stores_of.vectors, memory, vector)
    ops = memory_service(
        stores_of, embedder, load_config({**store_env, "EMBEDDING_PROVIDER": "local"})
    )
    seen = await seen_by_every_reader(store_env, ops, ids)
    assert seen["get"] == seen["list"] == seen["export"] == LIVE
    assert seen["recall"] <= LIVE and seen["stats"] == {str(len(LIVE))}


async def test_a_tenant_holding_only_a_memory_that_expired_in_1960_does_not_stop_export_all(
    store_env: dict[str, str],
    stores_of: Stores,
    embedder: Embedder,  # noqa: F811
) -> None:
    now_ms = time.time_ns() // 1_000_000
    vector = (await embedder.embed_many(["x"]))[0]
    old = Memory(id=new_ulid(now_ms), tenant="aaa", content="An old fact.", created_at=iso_ms(0))
    # Its keys as an import before this fix wrote them: a minus sign in the expiry part.
    await stores_of.vectors.put(old, vector)
    await stores_of.objects.put(f"{index_key(old)}##-315619200000", "")
    kept = Memory(id=new_ulid(now_ms), tenant="zzz", content="A fact.", created_at=iso_ms(now_ms))
    await write_memory(stores_of.objects, stores_of.vectors, kept, vector)
    code, out, err = await cli("export", "--all", env=store_env)
    assert code == 0, err
    assert [json.loads(line)["id"] for line in out.splitlines()] == [kept.id]
    assert "exported 1 memories of 2 tenant(s)" in err
