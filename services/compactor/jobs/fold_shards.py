"""The fold job: fold every tenant that has any shard behind the lag.

Unlike the API's on-demand fold there is no threshold: one absorbable shard is enough, which keeps
every tenant's backlog near one lag of flushes. Safe beside the API's folds and a second
compactor: each fold is a compare-and-swap on merged.json.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import msgspec

from services.compactor.jobs.context import JobContext
from services.compactor.tenants import scan_backlog
from shared.counters import fold_tenant
from shared.lexical import fold_lexicon_tenant
from shared.lexical.segments import LEXICON_ROOT
from shared.model.keys import STATS_ROOT

logger = logging.getLogger(__name__)


class FoldJobResult(msgspec.Struct, frozen=True, kw_only=True):
    """One run of the fold job. Backlog figures are what remains after this run's deletes."""

    tenants: int = 0
    tenants_failed: int = 0
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
    duration_s: float = 0.0


class _Folded(Protocol):
    """What one tenant's fold reports, counters' (FoldResult) or lexicon's alike."""

    @property
    def shards_folded(self) -> int: ...

    @property
    def shards_deleted(self) -> int: ...

    @property
    def conflict(self) -> bool: ...


FoldOne = Callable[..., Awaitable[_Folded]]


async def fold_shards(ctx: JobContext) -> FoldJobResult:
    """Fold each tenant with shards behind the lag, the counters' and then the keyword leg's
    lexicon (the same layout under another root); a failing tenant is logged and skipped.

    Raises:
        StorageError: a tenant scan itself failed (no tenant of that root was folded).
    """
    started = time.perf_counter()
    counters = await _fold_root(ctx, STATS_ROOT, fold_tenant)
    lexicon = await _fold_root(ctx, LEXICON_ROOT, fold_lexicon_tenant)
    return msgspec.structs.replace(
        counters,
        tenants_failed=counters.tenants_failed + lexicon.tenants_failed,
        conflicts=counters.conflicts + lexicon.conflicts,
        lexicon_tenants=lexicon.tenants,
        lexicon_shards_folded=lexicon.shards_folded,
        lexicon_backlog_shards=lexicon.backlog_shards,
        duration_s=time.perf_counter() - started,
    )


async def _fold_root(ctx: JobContext, root: str, fold_one: FoldOne) -> FoldJobResult:
    backlog = await scan_backlog(ctx.objects, now_ms=ctx.clock_ms(), lag_ms=ctx.lag_ms, root=root)
    remaining = {entry.tenant: entry.shards for entry in backlog}
    tenants = failed = folded = deleted = conflicts = 0
    durations: list[float] = []
    for entry in backlog:
        if entry.behind_lag == 0:
            continue
        tenants += 1
        fold_started = time.perf_counter()
        try:
            result = await fold_one(
                ctx.objects, entry.tenant, now_ms=ctx.clock_ms(), lag_ms=ctx.lag_ms
            )
        except Exception:
            # One tenant's broken object or a transient error must not starve the others.
            failed += 1
            logger.exception("compactor_fold_failed", extra={"tenant": entry.tenant, "root": root})
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
