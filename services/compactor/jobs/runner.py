"""Runs a job once: times it, records its result in the metrics, logs one line.

The only place in the compactor that catches everything: a job run that fails is counted and
logged, and the scheduler tries again at the next interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from services.compactor.jobs.context import JobContext
from services.compactor.jobs.expire_memories import ExpireJobResult, expire_memories
from services.compactor.jobs.fold_shards import FoldJobResult, fold_shards
from services.compactor.jobs.gc_shards import GcJobResult, gc_shards
from services.compactor.jobs.reconcile_stores import ReconcileJobResult, reconcile_stores
from services.compactor.metrics import CompactorMetrics
from shared.expiry import Expirer
from shared.reconcile import Reconciler

logger = logging.getLogger(__name__)

R = TypeVar("R")


def _result_label(tenants_failed: int) -> str:
    return "partial" if tenants_failed else "ok"


class JobRunner:
    """The four jobs bound to one context and one set of metrics, ready for the scheduler."""

    def __init__(
        self,
        ctx: JobContext,
        metrics: CompactorMetrics,
        *,
        reconciler: Reconciler,
        expirer: Expirer,
    ) -> None:
        self._ctx = ctx
        self._metrics = metrics
        self._reconciler = reconciler
        self._expirer = expirer
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def drain(self, *, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) for runs in progress, so a shutdown does not cut them."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout_s)

    @contextlib.contextmanager
    def _tracked(self) -> Iterator[None]:
        self._running += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._running -= 1
            if not self._running:
                self._idle.set()

    async def fold(self) -> FoldJobResult | None:
        with self._tracked():
            return await self._fold()

    async def gc(self) -> GcJobResult | None:
        with self._tracked():
            return await self._gc()

    async def reconcile(self) -> ReconcileJobResult | None:
        with self._tracked():
            return await self._reconcile()

    async def expire(self) -> ExpireJobResult | None:
        with self._tracked():
            return await self._expire()

    async def _fold(self) -> FoldJobResult | None:
        result = await self._attempt("fold", lambda: fold_shards(self._ctx))
        if result is None:
            return None
        m = self._metrics
        m.shards_folded.inc(result.shards_folded)
        m.shards_deleted.labels(job="fold").inc(result.shards_deleted)
        m.cas_conflicts.inc(result.conflicts)
        m.tenant_failures.labels(job="fold").inc(result.tenants_failed)
        m.backlog.set(result.backlog_shards)
        m.lexicon_shards_folded.inc(result.lexicon_shards_folded)
        m.lexicon_backlog.set(result.lexicon_backlog_shards)
        m.backlog_largest.set(result.largest_backlog_shards)
        for seconds in result.fold_durations_s:
            m.fold_seconds.observe(seconds)
        self._finished("fold", result.tenants_failed, result.duration_s)
        logger.info(
            "compactor_job",
            extra={
                "job": "fold",
                "tenants": result.tenants,
                "tenantsFailed": result.tenants_failed,
                "shardsFolded": result.shards_folded,
                "shardsDeleted": result.shards_deleted,
                "conflicts": result.conflicts,
                "backlog": result.backlog_shards,
                "lexiconShardsFolded": result.lexicon_shards_folded,
                "lexiconBacklog": result.lexicon_backlog_shards,
                "ms": round(result.duration_s * 1000),
            },
        )
        return result

    async def _gc(self) -> GcJobResult | None:
        result = await self._attempt("gc", lambda: gc_shards(self._ctx))
        if result is None:
            return None
        self._metrics.shards_deleted.labels(job="gc").inc(result.shards_deleted)
        self._metrics.store_rows_pruned.inc(result.store_rows_pruned)
        self._metrics.tenant_failures.labels(job="gc").inc(result.tenants_failed)
        self._finished("gc", result.tenants_failed, result.duration_s)
        logger.info(
            "compactor_job",
            extra={
                "job": "gc",
                "tenants": result.tenants,
                "tenantsFailed": result.tenants_failed,
                "shardsDeleted": result.shards_deleted,
                "storeRowsPruned": result.store_rows_pruned,
                "ms": round(result.duration_s * 1000),
            },
        )
        return result

    async def _reconcile(self) -> ReconcileJobResult | None:
        result = await self._attempt("reconcile", lambda: reconcile_stores(self._reconciler))
        if result is None:
            return None
        repaired = result.repaired
        for repair, count in (
            ("key_restored", repaired.keys_restored),
            ("key_deleted", repaired.keys_deleted),
            ("lexicon_added", repaired.lexicon_added),
            ("lexicon_removed", repaired.lexicon_removed),
        ):
            self._metrics.repairs.labels(repair=repair).inc(count)
        self._metrics.tenant_failures.labels(job="reconcile").inc(result.tenants_failed)
        self._finished("reconcile", result.tenants_failed, result.duration_s)
        logger.info(
            "compactor_job",
            extra={
                "job": "reconcile",
                "tenants": result.tenants,
                "tenantsFailed": result.tenants_failed,
                "keysRestored": repaired.keys_restored,
                "keysDeleted": repaired.keys_deleted,
                "lexiconAdded": repaired.lexicon_added,
                "lexiconRemoved": repaired.lexicon_removed,
                "ms": round(result.duration_s * 1000),
            },
        )
        return result

    async def _expire(self) -> ExpireJobResult | None:
        result = await self._attempt("expire", lambda: expire_memories(self._expirer))
        if result is None:
            return None
        self._metrics.expired_deleted.inc(result.deleted)
        self._metrics.tenant_failures.labels(job="expire").inc(result.tenants_failed)
        self._finished("expire", result.tenants_failed, result.duration_s)
        logger.info(
            "compactor_job",
            extra={
                "job": "expire",
                "tenants": result.tenants,
                "tenantsFailed": result.tenants_failed,
                "due": result.due,
                "deleted": result.deleted,
                "ms": round(result.duration_s * 1000),
            },
        )
        return result

    async def _attempt(self, job: str, run: Callable[[], Awaitable[R]]) -> R | None:
        """The job's result, or None after counting and logging its failure."""
        started = time.perf_counter()
        try:
            return await run()
        except Exception:
            self._failed(job, started)
            return None

    def _finished(self, job: str, tenants_failed: int, duration_s: float) -> None:
        self._metrics.runs.labels(job=job, result=_result_label(tenants_failed)).inc()
        self._metrics.job_seconds.labels(job=job).observe(duration_s)
        if not tenants_failed:
            self._metrics.last_success.labels(job=job).set(time.time())

    def _failed(self, job: str, started: float) -> None:
        logger.exception("compactor_job_failed", extra={"job": job})
        self._metrics.runs.labels(job=job, result="error").inc()
        self._metrics.job_seconds.labels(job=job).observe(time.perf_counter() - started)
