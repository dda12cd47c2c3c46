"""The fold job: fold every tenant that has any shard behind the lag.

Unlike the API's on-demand fold there is no threshold: one absorbable shard is enough, which keeps
every tenant's backlog near one lag of flushes. Safe beside the API's folds and a second
compactor: each fold is a compare-and-swap on merged.json.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import msgspec

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.metrics import CompactorMetrics
from shared.counters import COUNTER_LOG
from shared.lexical import LEXICON_LOG
from shared.storage.shardlog import ShardLog

logger = logging.getLogger(__name__)


class FoldJobResult(JobRun, frozen=True, kw_only=True):
    """One run of the fold job. Backlog figures are what remains after this run's deletes."""

    shards_folded: int = 0
    shards_deleted: int = 0
    conflicts: int = 0
    backlog_shards: int = 0
    largest_backlog_shards: int = 0
    fold_durations_s: tuple[float, ...] = ()
    # The keyword leg's lexicon shards, folded in the same run (shared.lexical).
    lexicon_tenants: int = 0
    lexicon_shards_folded: int = 0
    lexicon_backlog_shards: int = 0

    def record(self, m: CompactorMetrics) -> None:
        m.shards_folded.inc(self.shards_folded)
        m.shards_deleted.labels(job="fold").inc(self.shards_deleted)
        m.cas_conflicts.inc(self.conflicts)
        m.backlog.set(self.backlog_shards)
        m.lexicon_shards_folded.inc(self.lexicon_shards_folded)
        m.lexicon_backlog.set(self.lexicon_backlog_shards)
        m.backlog_largest.set(self.largest_backlog_shards)
        for seconds in self.fold_durations_s:
            m.fold_seconds.observe(seconds)

    def log_fields(self) -> dict[str, int]:
        return {
            "shardsFolded": self.shards_folded,
            "shardsDeleted": self.shards_deleted,
            "conflicts": self.conflicts,
            "backlog": self.backlog_shards,
            "lexiconShardsFolded": self.lexicon_shards_folded,
            "lexiconBacklog": self.lexicon_backlog_shards,
        }


async def fold_shards(ctx: JobContext) -> FoldJobResult:
    """Fold each tenant with shards behind the lag, in the counters' log and then the keyword
    leg's lexicon (two uses of one shard log); a failing tenant is logged and skipped.

    Raises:
        StorageError: a tenant scan itself failed (no tenant of that log was folded).
    """
    counters = await _fold_log(ctx, COUNTER_LOG)
    lexicon = await _fold_log(ctx, LEXICON_LOG)
    return msgspec.structs.replace(
        counters,
        tenants_failed=counters.tenants_failed + lexicon.tenants_failed,
        conflicts=counters.conflicts + lexicon.conflicts,
        lexicon_tenants=lexicon.tenants,
        lexicon_shards_folded=lexicon.shards_folded,
        lexicon_backlog_shards=lexicon.backlog_shards,
    )


async def _fold_log(ctx: JobContext, log: ShardLog[Any]) -> FoldJobResult:
    backlog = await log.backlog(ctx.objects, now_ms=ctx.clock_ms(), lag_ms=ctx.lag_ms)
    remaining = {entry.tenant: entry.shards for entry in backlog}
    tenants = failed = folded = deleted = conflicts = 0
    durations: list[float] = []
    for entry in backlog:
        if entry.behind_lag == 0:
            continue
        tenants += 1
        fold_started = time.perf_counter()
        try:
            result = await log.fold(
                ctx.objects, entry.tenant, now_ms=ctx.clock_ms(), lag_ms=ctx.lag_ms
            )
        except Exception:
            # One tenant's broken object or a transient error must not starve the others.
            failed += 1
            logger.exception(
                "compactor_fold_failed", extra={"tenant": entry.tenant, "root": log.layout.root}
            )
            continue
        finally:
            durations.append(time.perf_counter() - fold_started)
        folded += result.shards_folded
        deleted += result.shards_deleted
        conflicts += result.conflict
        remaining[entry.tenant] -= result.shards_deleted
    return FoldJobResult(
        tenants=tenants,
        tenants_failed=failed,
        shards_folded=folded,
        shards_deleted=deleted,
        conflicts=conflicts,
        backlog_shards=sum(remaining.values()),
        largest_backlog_shards=max(remaining.values(), default=0),
        fold_durations_s=tuple(durations),
    )
