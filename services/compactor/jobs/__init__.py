"""Compactor jobs: plain async functions over a JobContext, each returning a result record."""

from services.compactor.jobs.context import JobContext
from services.compactor.jobs.fold_shards import FoldJobResult, fold_shards
from services.compactor.jobs.gc_shards import GcJobResult, gc_shards
from services.compactor.jobs.reconcile_stores import ReconcileJobResult, reconcile_stores
from services.compactor.jobs.runner import JobRunner

__all__ = [
    "FoldJobResult",
    "GcJobResult",
    "JobContext",
    "JobRunner",
    "ReconcileJobResult",
    "fold_shards",
    "gc_shards",
    "reconcile_stores",
]
