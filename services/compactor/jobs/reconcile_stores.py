"""The reconcile job: repair memories a killed process left half-written (shared.reconcile).

One listing of every index key and one pass over the vector store per run, then one lexicon read
per tenant found; a tenant with nothing to repair costs nothing more. It runs far less often than
the fold job: a half-written memory is rare (a crash between two writes) and, with the key
written first, costs only an over-count in memory_stats until it is repaired.
"""

from __future__ import annotations

import logging
import time

import msgspec

from shared.reconcile import Reconciler, ReconcileResult

logger = logging.getLogger(__name__)


class ReconcileJobResult(msgspec.Struct, frozen=True, kw_only=True):
    tenants: int = 0
    tenants_failed: int = 0
    repaired: ReconcileResult = ReconcileResult()
    duration_s: float = 0.0


async def reconcile_stores(reconciler: Reconciler) -> ReconcileJobResult:
    """Reconcile every tenant that has an index key or a vector; a failing tenant is logged and
    skipped.

    Raises:
        StorageError: the inventory itself failed (no tenant was reconciled).
    """
    started = time.perf_counter()
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
    return ReconcileJobResult(
        tenants=len(found),
        tenants_failed=failed,
        repaired=repaired,
        duration_s=time.perf_counter() - started,
    )
