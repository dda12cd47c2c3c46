"""The expiry job: delete memories whose expiry has passed (shared.memories.expiry).

Expired memories are invisible already, so this only frees storage; one listing of ``expiry/``
that stops at the first future key, then one read and a few deletes per tenant with something
due.
"""

from __future__ import annotations

import msgspec

from services.compactor.jobs.context import JobContext, JobRun
from services.compactor.metrics import CompactorMetrics
from shared.errors import InvariantError


class ExpireJobResult(JobRun, frozen=True, kw_only=True):
    deleted: int = 0
    due: int = 0

    def record(self, m: CompactorMetrics) -> None:
        m.expired_deleted.inc(self.deleted)

    def log_fields(self) -> dict[str, int]:
        return {"due": self.due, "deleted": self.deleted}


async def expire_memories(ctx: JobContext) -> ExpireJobResult:
    """Raises StorageError when the listing itself failed (nothing was deleted)."""
    if ctx.expirer is None:
        raise InvariantError("the expiry job was given no expirer")
    result = await ctx.expirer.run()
    return ExpireJobResult(**msgspec.structs.asdict(result))
