"""The in-process exact scan of the PostgreSQL backend, one job per module: ``snapshot`` (one
tenant's rows as a matrix, pure), ``workers`` (the threads a large scan is split across),
``reads`` (what a refresh reads), ``own_writes`` (this process's writes until carried in),
``held`` (the budgeted LRU of snapshots) and ``cache`` (generations, freshness and refresh)."""

from shared.storage.postgres.scan.cache import GENERATION_SQL, ScanCache, ScanCacheStats
from shared.storage.postgres.scan.own_writes import AddedRow
from shared.storage.postgres.scan.snapshot import SnapshotRow, TenantSnapshot
from shared.storage.postgres.scan.workers import ScanWorkers

__all__ = [
    "GENERATION_SQL",
    "AddedRow",
    "ScanCache",
    "ScanCacheStats",
    "ScanWorkers",
    "SnapshotRow",
    "TenantSnapshot",
]
