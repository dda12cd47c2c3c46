"""The benchmarks ask their questions in copies of a tenant: a copy must answer as the source
would, so it carries the revision records between the memories it copies."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bench._inproc import copy_tenant, wired_local
from shared.config import load_config
from shared.embedding import Embedder, open_embedder
from shared.model.draft import Draft
from shared.operations.recall import recall
from shared.operations.remember import remember
from shared.revisions import read_replacements
from shared.storage import Stores, open_stores

OLDER = "The frontend is built with webpack."
NEWER = "The frontend is built with vite since the rewrite."
UNRELATED = "Standups are at 9:30 on weekdays."


@pytest.fixture
async def embedder() -> AsyncIterator[Embedder]:
    async with open_embedder(load_config({}, local=True)) as opened:
        yield opened


@pytest.fixture
async def stores(pg_url: str) -> AsyncIterator[Stores]:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as opened:
        yield opened


async def test_a_copy_carries_the_links_between_the_memories_it_copies(
    stores: Stores, embedder: Embedder
) -> None:
    local = wired_local(load_config({}, local=True), stores, embedder)
    older = await remember(local.ops, "source", None, Draft(content=OLDER))
    newer = await remember(local.ops, "source", None, Draft(content=NEWER))
    left_out = await remember(local.ops, "source", None, Draft(content=UNRELATED))
    assert newer.supersedes is not None, "the pair must be linked for the copy to carry it"
    # A record naming a memory that is not copied stays behind.
    await local.ops.replacements.record("source", left_out.memory.id, newer.memory.id)

    copied = await copy_tenant(
        local, "source", ["copy-a", "copy-b"], sorted([older.memory.id, newer.memory.id])
    )

    assert copied == 4
    for target in ("copy-a", "copy-b"):
        records = await read_replacements(stores.objects, target)
        assert records.links() == [(older.memory.id, newer.memory.id)]
        assert records.replaces(newer.memory.id) == ()
        answer = await recall(
            local.ops, target, None, query="what builds the frontend", mode="balanced", limit=5
        )
        assert answer.outcome is not None
        results = answer.outcome.results
        assert [r.memory.id for r in results[:2]] == [newer.memory.id, older.memory.id]
        assert results[1].superseded_by, "the older is labelled with the newer that updates it"
