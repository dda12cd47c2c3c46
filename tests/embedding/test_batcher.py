"""MicroBatcher with plain functions standing in for a model (no I/O involved)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.embedding._batcher import MicroBatcher
from shared.errors import EmbeddingError


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(max_workers=1)
    yield pool
    pool.shutdown(wait=True)


class LengthModel:
    """Vector = [len(text)]; records each batch it was given; can be held mid-batch."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.gate.wait(timeout=5)
        self.batches.append(list(texts))
        if "explode" in texts:
            raise EmbeddingError("the model exploded")
        return [[float(len(t))] for t in texts]


async def test_a_lone_call_runs_at_once_as_a_batch_of_one(executor: ThreadPoolExecutor) -> None:
    model = LengthModel()
    batcher = MicroBatcher(model, executor=executor, max_batch=8)
    assert await batcher.submit("abc") == [3.0]
    assert model.batches == [["abc"]]


async def test_calls_arriving_during_a_batch_share_the_next_one(
    executor: ThreadPoolExecutor,
) -> None:
    model = LengthModel()
    model.gate.clear()
    batcher = MicroBatcher(model, executor=executor, max_batch=8)
    first = asyncio.ensure_future(batcher.submit("a"))
    await asyncio.sleep(0.05)  # the first batch is now running, held by the gate
    rest = [asyncio.ensure_future(batcher.submit("b" * n)) for n in range(2, 12)]
    await asyncio.sleep(0)
    model.gate.set()
    assert await first == [1.0]
    assert [await r for r in rest] == [[float(n)] for n in range(2, 12)]
    assert [len(b) for b in model.batches] == [1, 8, 2], "queued calls split at max_batch"


async def test_a_failed_batch_fails_its_callers_and_the_next_batch_still_runs(
    executor: ThreadPoolExecutor,
) -> None:
    model = LengthModel()
    model.gate.clear()
    batcher = MicroBatcher(model, executor=executor, max_batch=8)
    running = asyncio.ensure_future(batcher.submit("running"))
    await asyncio.sleep(0.05)  # held by the gate, so the next two share a batch
    queued = [asyncio.ensure_future(batcher.submit(t)) for t in ("explode", "fine")]
    await asyncio.sleep(0)
    model.gate.set()
    assert await running == [7.0]
    results = await asyncio.gather(*queued, return_exceptions=True)
    assert all(isinstance(r, EmbeddingError) for r in results)
    assert await batcher.submit("later") == [5.0]
    assert model.batches == [["running"], ["explode", "fine"], ["later"]]


async def test_a_call_finding_the_model_idle_is_with_the_model_before_it_first_yields(
    executor: ThreadPoolExecutor,
) -> None:
    """No task hop between a call and the model: whatever else the loop has ready runs beside
    the model, not before it."""
    started = threading.Event()

    def watched(texts: list[str]) -> list[list[float]]:
        started.set()
        return [[float(len(t))] for t in texts]

    batcher = MicroBatcher(watched, executor=executor, max_batch=8)
    call = asyncio.ensure_future(batcher.submit("abc"))
    await asyncio.sleep(0)  # one loop step: submit has run up to its first suspension
    # Blocks the loop on purpose: only work handed over before submit yielded can start.
    assert started.wait(timeout=2)
    assert await call == [3.0]


async def test_submit_many_shares_batches_from_the_first(executor: ThreadPoolExecutor) -> None:
    model = LengthModel()
    batcher = MicroBatcher(model, executor=executor, max_batch=8)
    assert await batcher.submit_many(["a", "bb", "ccc"]) == [[1.0], [2.0], [3.0]]
    assert model.batches == [["a", "bb", "ccc"]]


async def test_close_fails_queued_calls_and_refuses_new_ones(
    executor: ThreadPoolExecutor,
) -> None:
    model = LengthModel()
    model.gate.clear()
    batcher = MicroBatcher(model, executor=executor, max_batch=1)
    running = asyncio.ensure_future(batcher.submit("running"))
    await asyncio.sleep(0.05)
    queued = asyncio.ensure_future(batcher.submit("queued"))
    await asyncio.sleep(0)
    await batcher.close()
    model.gate.set()
    for task in (running, queued):
        with pytest.raises(EmbeddingError, match="closed"):
            await task
    with pytest.raises(EmbeddingError, match="closed"):
        await batcher.submit("new")


def test_max_batch_must_be_positive(executor: ThreadPoolExecutor) -> None:
    with pytest.raises(ValueError, match="max_batch must be at least 1"):
        MicroBatcher(LengthModel(), executor=executor, max_batch=0)
