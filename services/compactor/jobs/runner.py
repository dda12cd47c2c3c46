"""Runs a job once: times it, records its result in the metrics, logs one line.

The only place in the compactor that catches everything: a job run that fails is counted and
logged, and the scheduler tries again at the next interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.jobs.table import Job
from services.compactor.metrics import CompactorMetrics

logger = logging.getLogger(__name__)


def _result_label(tenants_failed: int) -> str:
    return "partial" if tenants_failed else "ok"


class JobRunner:
    """Runs any job of the table over one context and one set of metrics."""

    def __init__(self, ctx: JobContext, metrics: CompactorMetrics) -> None:
        self._ctx = ctx
        self._metrics = metrics
        self._running = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def drain(self, *, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) for runs in progress, so a shutdown does not cut them."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout_s)

    async def run(self, job: Job) -> JobRun | None:
        """One run of ``job``: its result, or None after counting and logging its failure."""
        with self._tracked():
            started = time.perf_counter()
            try:
                result = await job.run(self._ctx)
            except Exception:
                self._failed(job.name, started)
                return None
            duration_s = time.perf_counter() - started
            result.record(self._metrics)
            self._metrics.tenant_failures.labels(job=job.name).inc(result.tenants_failed)
            self._finished(job.name, result.tenants_failed, duration_s)
            logger.info(
                "compactor_job",
                extra={
                    "job": job.name,
                    "tenants": result.tenants,
                    "tenantsFailed": result.tenants_failed,
                    **result.log_fields(),
                    "ms": round(duration_s * 1000),
                },
            )
            return result

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

    def _finished(self, job: str, tenants_failed: int, duration_s: float) -> None:
        self._metrics.runs.labels(job=job, result=_result_label(tenants_failed)).inc()
        self._metrics.job_seconds.labels(job=job).observe(duration_s)
        if not tenants_failed:
            self._metrics.last_success.labels(job=job).set(time.time())

    def _failed(self, job: str, started: float) -> None:
        logger.exception("compactor_job_failed", extra={"job": job})
        self._metrics.runs.labels(job=job, result="error").inc()
        self._metrics.job_seconds.labels(job=job).observe(time.perf_counter() - started)
