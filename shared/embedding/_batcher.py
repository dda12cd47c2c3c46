"""Coalesce concurrent embed calls into one batch for a blocking model running on its own thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from shared.errors import EmbeddingError

Vector = list[float]
BatchFunction = Callable[[list[str]], list[Vector]]


class MicroBatcher:
    """Runs ``run_batch`` on ``executor`` for whatever texts are waiting when it gets the chance.

    There is no timer: a call that finds the model idle is handed to the model thread before
    ``submit`` first yields, so single-call latency is the model's own (a task hop here would
    queue it behind whatever else the loop had ready). Calls that arrive while
    a batch is running wait for it and then go out together, which is where the throughput under
    concurrency comes from — one forward pass over 32 texts costs far less than 32 passes.
    ``submit_many`` queues all its texts before starting, so they share batches from the first.
    """

    def __init__(self, run_batch: BatchFunction, *, executor: Executor, max_batch: int) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self._run_batch = run_batch
        self._executor = executor
        self._max_batch = max_batch
        self._pending: list[tuple[str, asyncio.Future[Vector]]] = []
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self.batches_run = 0

    async def submit(self, text: str) -> Vector:
        """The vector for one text, computed in whichever batch picks it up."""
        future = self._enqueue(text)
        self._start()
        return await future

    async def submit_many(self, texts: Sequence[str]) -> list[Vector]:
        futures = [self._enqueue(text) for text in texts]
        self._start()
        return list(await asyncio.gather(*futures))

    async def close(self) -> None:
        """Refuse new work, let the running batch finish, and fail anything still queued."""
        self._closed = True
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        self._fail_pending(
            EmbeddingError("the local embedder closed before this text was embedded")
        )

    def _enqueue(self, text: str) -> asyncio.Future[Vector]:
        if self._closed:
            raise EmbeddingError("the local embedder is closed")
        future: asyncio.Future[Vector] = asyncio.get_running_loop().create_future()
        self._pending.append((text, future))
        return future

    def _start(self) -> None:
        """Send the waiting texts to the model thread now, unless a batch is running: its worker
        takes them next."""
        if self._worker is not None and not self._worker.done():
            return
        batch = self._next_batch()
        if batch:
            self._worker = asyncio.create_task(self._drain(batch, self._run(batch)))

    def _next_batch(self) -> list[tuple[str, asyncio.Future[Vector]]]:
        """Up to ``max_batch`` waiting texts whose callers still want them (a caller that gave
        up — a timeout, a cancelled request — needs no inference)."""
        while self._pending:
            batch = self._pending[: self._max_batch]
            del self._pending[: self._max_batch]
            batch = [(text, future) for text, future in batch if not future.done()]
            if batch:
                return batch
        return []

    def _run(self, batch: list[tuple[str, asyncio.Future[Vector]]]) -> asyncio.Future[list[Vector]]:
        texts = [text for text, _ in batch]
        return asyncio.get_running_loop().run_in_executor(self._executor, self._run_batch, texts)

    async def _drain(
        self,
        batch: list[tuple[str, asyncio.Future[Vector]]],
        running: asyncio.Future[list[Vector]],
    ) -> None:
        while batch:
            try:
                vectors = await running
            except asyncio.CancelledError:
                self._fail_batch(batch, EmbeddingError("the local embedder closed mid-batch"))
                raise
            except Exception as error:  # noqa: BLE001 - every waiting caller must hear about it
                self._fail_batch(batch, error)
            else:
                self.batches_run += 1
                for (_, future), vector in zip(batch, vectors, strict=True):
                    if not future.done():
                        future.set_result(vector)
            batch = self._next_batch()
            if batch:
                running = self._run(batch)

    def _fail_pending(self, error: Exception) -> None:
        pending, self._pending = self._pending, []
        self._fail_batch(pending, error)

    @staticmethod
    def _fail_batch(batch: list[tuple[str, asyncio.Future[Vector]]], error: Exception) -> None:
        for _, future in batch:
            if not future.done():
                future.set_exception(error)
