"""The in-process exact scan of the PostgreSQL backend, one job per module: ``snapshot`` (one
tenant's rows as a matrix, pure), ``workers`` (the threads a large scan is split across),
``reads`` (what a refresh reads), ``own_writes`` (this process's writes until carried in),
``lru`` (the budgeted LRU of snapshots), ``cache`` (generations, freshness and refresh) and
``store`` (the vector store that answers from them, composed around the plain one)."""

from shared.storage.postgres.scan.cache import ScanCache
from shared.storage.postgres.scan.own_writes import AddedRow
from shared.storage.postgres.scan.reads import prune_change_log
from shared.storage.postgres.scan.snapshot import TenantSnapshot
from shared.storage.postgres.scan.store import SnapshotVectorStore

__all__ = ["AddedRow", "ScanCache", "SnapshotVectorStore", "TenantSnapshot", "prune_change_log"]
