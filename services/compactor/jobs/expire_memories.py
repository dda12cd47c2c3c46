"""The expiry job: delete memories whose expiry has passed (shared.expiry).

Expired memories are invisible already, so this only frees storage; one listing of ``expiry/``
that stops at the first future key, then one read and a few deletes per tenant with something
due.
"""

from __future__ import annotations

import time

import msgspec

from shared.expiry import Expirer


class ExpireJobResult(msgspec.Struct, frozen=True, kw_only=True):
    tenants: int = 0
    tenants_failed: int = 0
    deleted: int = 0
    due: int = 0
    duration_s: float = 0.0


async def expire_memories(expirer: Expirer) -> ExpireJobResult:
    """Raises StorageError when the listing itself failed (nothing was deleted)."""
    started = time.perf_counter()
    result = await expirer.run()
    return ExpireJobResult(
        tenants=result.tenants,
        tenants_failed=result.tenants_failed,
        deleted=result.deleted,
        due=result.due,
        duration_s=time.perf_counter() - started,
    )
