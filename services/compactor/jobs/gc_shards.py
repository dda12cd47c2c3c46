"""The GC job: delete shards at or below a tenant's watermark, in both shard logs (counters and
lexicon), then the backend's own housekeeping
(PostgreSQL prunes change-log rows older than an hour).

A fold deletes what it absorbed right after its compare-and-swap; a fold that died in between
leaves those shards behind. They are never counted again (the watermark excludes them), so this
is storage hygiene, not correctness, and it runs far less often than the fold job.
"""

from __future__ import annotations

import logging

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.metrics import CompactorMetrics
from shared.counters import COUNTER_LOG
from shared.lexical import LEXICON_LOG

logger = logging.getLogger(__name__)


class GcJobResult(JobRun, frozen=True, kw_only=True):
    """One run of the GC job."""

    shards_deleted: int = 0
    # Rows the backend's housekeeping removed (PostgreSQL: change-log rows past retention).
    store_rows_pruned: int = 0

    def record(self, m: CompactorMetrics) -> None:
        m.shards_deleted.labels(job="gc").inc(self.shards_deleted)
        m.store_rows_pruned.inc(self.store_rows_pruned)

    def log_fields(self) -> dict[str, int]:
        return {"shardsDeleted": self.shards_deleted, "storeRowsPruned": self.store_rows_pruned}


async def gc_shards(ctx: JobContext) -> GcJobResult:
    """Collect garbage for every tenant with shards behind the lag; failures skip the tenant.

    Raises:
        StorageError: the tenant scan itself failed.
    """
    tenants = failed = deleted = 0
    for log in (COUNTER_LOG, LEXICON_LOG):
        backlog = await log.backlog(ctx.objects, now_ms=ctx.clock_ms(), lag_ms=ctx.lag_ms)
        for entry in backlog:
            # Anything at or below a watermark was absorbable when folded: behind the lag.
            if entry.behind_lag == 0:
                continue
            tenants += 1
            try:
                deleted += await log.collect_garbage(ctx.objects, entry.tenant)
            except Exception:
                failed += 1
                logger.exception(
                    "compactor_gc_failed",
                    extra={"tenant": entry.tenant, "root": log.layout.root},
                )
    pruned = await ctx.housekeeping() if ctx.housekeeping is not None else 0
    return GcJobResult(
        tenants=tenants,
        tenants_failed=failed,
        shards_deleted=deleted,
        store_rows_pruned=pruned,
    )
