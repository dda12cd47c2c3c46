"""Real operations: PostgreSQL (a fresh database per test), the local model, real counters."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from shared.config import load_config
from shared.counters import CounterTracker
from shared.embedding import Embedder, open_embedder
from shared.lexical import Lexicon
from shared.model import wall_clock_ms
from shared.operations import OperationsContext, operations_context
from shared.revisions import ReplacementLog
from shared.storage import Stores, open_stores

FIXED_NOW_MS = 1_800_000_000_000


class Clock:
    """A settable clock so that ids, recency and counters are deterministic."""

    def __init__(self, now_ms: int = FIXED_NOW_MS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


@pytest.fixture(scope="session")
async def local_embedder() -> AsyncIterator[Embedder]:
    config = load_config({}, local=True)
    async with open_embedder(config) as embedder:
        yield embedder


@pytest.fixture
async def stores(pg_url: str) -> AsyncIterator[Stores]:
    async with open_stores(load_config({"DATABASE_URL": pg_url})) as opened:
        yield opened


@pytest.fixture
def clock() -> Clock:
    return Clock()


def memory_service(
    stores: Stores, embedder: Embedder, clock: Callable[[], int] = wall_clock_ms
) -> OperationsContext:
    """An OperationsContext over ``stores`` wired as the API wires one (without its wrappers)."""
    config = load_config({}, local=True)
    tracker = CounterTracker(
        stores.objects, process_id="test-process", compact_threshold=20, clock_ms=clock
    )
    lexicon = Lexicon(stores.objects, stores.vectors, process_id="test-process", clock_ms=clock)
    return operations_context(
        vectors=stores.vectors,
        objects=stores.objects,
        embedder=embedder,
        counters=tracker,
        lexicon=lexicon,
        replacements=ReplacementLog(stores.objects, clock_ms=clock),
        snapshots=stores.snapshots,
        floor=config.recall.min_similarity,
        high_similarity=config.recall.high_similarity,
        clock_ms=clock,
    )


@pytest.fixture
def ops(stores: Stores, local_embedder: Embedder, clock: Clock) -> OperationsContext:
    return memory_service(stores, local_embedder, clock)
