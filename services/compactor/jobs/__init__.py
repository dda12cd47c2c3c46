"""Compactor jobs: plain async functions over a JobContext, each returning a result record,
listed in one table (``table.JOBS``) that the runner and the scheduler read."""

from services.compactor.jobs.context import JobContext
from services.compactor.jobs.runner import JobRunner
from services.compactor.jobs.table import EXPIRE, FOLD, GC, JOBS, RECONCILE

__all__ = [
    "EXPIRE",
    "FOLD",
    "GC",
    "JOBS",
    "RECONCILE",
    "JobContext",
    "JobRunner",
]
