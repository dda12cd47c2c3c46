"""ReplacementLog: a tenant's replacement records as this process sees them.

A record is one empty, create-only key (``replaced/<tenant>/<old>#<new>``, with a suffix for a
probable update and for its undoing: ``shared.model.keys``), written once and never updated,
like every other event here. Reads list the tenant's ``replaced/`` prefix (key
names only: 1,000 records per request) and cache the result for ``cache_ttl_ms``, the counters'
window: a replacement written by another process retires its memory here within that window,
one written by this process at once. Concurrent callers that find the cache stale share one
listing. The caching and the own-write rule are the counters' (``shared.storage.tenant_reads``).
"""

from __future__ import annotations

from collections.abc import Callable

from shared.errors import ConflictError
from shared.model.keys import RevisionKind, link_key, parse_revision_key, replaced_prefix
from shared.revisions.chain import Replacements
from shared.storage.interfaces import ObjectStore
from shared.storage.tenant_reads import (
    DEFAULT_CACHE_TTL_MS,
    DEFAULT_MAX_CACHED_TENANTS,
    TenantReads,
)


async def read_replacements(objects: ObjectStore, tenant: str) -> Replacements:
    """Every revision record of one tenant, from key names alone."""
    found = Replacements()
    async for keys in objects.pages(replaced_prefix(tenant)):
        for parsed in map(parse_revision_key, keys):
            if parsed is not None:
                found.record(*parsed)
    return found


class ReplacementLog:
    """Reads and writes replacement records (see the module docstring)."""

    def __init__(
        self,
        objects: ObjectStore,
        *,
        clock_ms: Callable[[], int],
        cache_ttl_ms: int = DEFAULT_CACHE_TTL_MS,
        max_cached_tenants: int = DEFAULT_MAX_CACHED_TENANTS,
    ) -> None:
        self._objects = objects
        self._reads: TenantReads[Replacements, tuple[str, str, RevisionKind]] = TenantReads(
            lambda tenant: read_replacements(objects, tenant),
            clock_ms=clock_ms,
            ttl_ms=cache_ttl_ms,
            max_tenants=max_cached_tenants,
        )

    async def view(self, tenant: str) -> Replacements:
        """The tenant's records: listed at most ``cache_ttl_ms`` ago, plus this process's own.

        The returned object may gain this process's later records; callers only read it."""
        read = await self._reads.get(tenant)
        for old_id, new_id, kind in self._reads.done_after(tenant, read):
            read.value.record(old_id, new_id, kind)
        return read.value

    async def record(
        self, tenant: str, old_id: str, new_id: str, kind: RevisionKind = "replaces"
    ) -> None:
        """Write one record; visible to this process's next ``view`` at once.

        Raises:
            StorageError: the write failed; nothing was recorded.
        """
        try:
            await self._objects.put(link_key(tenant, old_id, new_id, kind), "", if_none_match=True)
        except ConflictError:
            pass  # the same record, written by a retry: already there
        self._reads.forget_old_writes(tenant)
        self._reads.done(self._reads.writing(tenant, (old_id, new_id, kind)))
