"""The reconcile job: repair memories a killed process left half-written
(shared.memories.reconcile).

One listing of every index key and one pass over the vector store per run, then one lexicon read
per tenant found; a tenant with nothing to repair costs nothing more. It runs far less often than
the fold job: a half-written memory is rare (a crash between two writes) and, with the key
written first, costs only an over-count in memory_stats until it is repaired.
"""

from __future__ import annotations

import logging

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.metrics import CompactorMetrics
from shared.errors import InvariantError
from shared.memories.reconcile import ReconcileResult

logger = logging.getLogger(__name__)


class ReconcileJobResult(JobRun, frozen=True, kw_only=True):
    repaired: ReconcileResult = ReconcileResult()

    def record(self, m: CompactorMetrics) -> None:
        for repair, count in self._repairs().items():
            m.repairs.labels(repair=repair).inc(count)

    def log_fields(self) -> dict[str, int]:
        return self.repaired.log_fields()

    def _repairs(self) -> dict[str, int]:
        return {
            "key_restored": self.repaired.keys_restored,
            "key_deleted": self.repaired.keys_deleted,
            "lexicon_added": self.repaired.lexicon_added,
            "lexicon_removed": self.repaired.lexicon_removed,
        }


async def reconcile_stores(ctx: JobContext) -> ReconcileJobResult:
    """Reconcile every tenant that has an index key or a vector; a failing tenant is logged and
    skipped.

    Raises:
        StorageError: the inventory itself failed (no tenant was reconciled).
    """
    reconciler = ctx.reconciler
    if reconciler is None:
        raise InvariantError("the reconcile job was given no reconciler")
    found = await reconciler.inventory()
    failed = 0
    repaired = ReconcileResult()
    for tenant, (keys, vectors) in sorted(found.items()):
        try:
            repaired += await reconciler.tenant(tenant, keys, vectors)
        except Exception:
            # One tenant's broken object or a transient error must not starve the others.
            failed += 1
            logger.exception("compactor_reconcile_failed", extra={"tenant": tenant})
    return ReconcileJobResult(tenants=len(found), tenants_failed=failed, repaired=repaired)
