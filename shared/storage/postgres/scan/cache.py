"""Tenant snapshots for the exact scan, kept correct across pods by a per-tenant generation.

Every statement that inserts, updates or deletes rows of ``memories`` bumps its tenants' row in
``memory_generations`` in the same transaction (a trigger, see ``schema``), whoever runs it: this
process, another pod, an older release during a rolling update, or an operator by hand. So a
snapshot read at generation g holds exactly the rows a query would scan for as long as the
tenant's generation is still g, and one primary-key read per recall proves it.

A query never waits long for a snapshot. When there is none, or it is far behind, the caller
scans in SQL and a refresh runs in the background, one per tenant at a time, in one
repeatable-read transaction (``reads``): only the rows the change log names since the snapshot
it replaces, or, after a gap, every id and the rows it lacks. A query a few generations behind
(another process's writes) waits briefly for that refresh instead, and one behind this process's
own writes waits for their carry-in (``own_writes``). Snapshots are evicted least recently used
first to stay within the byte budget (``lru``); a tenant too large for the budget is not
retried until its generation moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from shared.errors import StorageError
from shared.model import Memory
from shared.storage.postgres._datastore import PostgresDatastore
from shared.storage.postgres.scan.lru import SnapshotLRU
from shared.storage.postgres.scan.own_writes import AddedRow, OwnWrite, OwnWrites
from shared.storage.postgres.scan.reads import (
    GENERATION_SQL,
    AddedRows,
    Step,
    read_all,
    read_changes,
)
from shared.storage.postgres.scan.snapshot import SnapshotRow, TenantSnapshot
from shared.storage.postgres.scan.workers import ScanWorkers

logger = logging.getLogger(__name__)

Rebuild = Callable[[str, str, Any], Memory | None]
# The longest a query waits for this process's own writes to be carried in (see current):
# far longer than one takes to commit and be carried in, short enough that a stuck write does
# not hold queries.
_OWN_WRITE_WAIT_S: Final = 0.25
# A query that finds the snapshot at most this many generations behind (writes of other
# processes, in a deployment of several) waits up to _REFRESH_WAIT_S for the refresh, which
# then reads only those rows, instead of scanning the whole tenant in SQL.
_SMALL_GAP: Final = 64
_REFRESH_WAIT_S: Final = 0.25


@dataclass
class ScanCacheStats:
    """Counts for tests and benchmarks: how often a query was answered from a snapshot."""

    hits: int = 0
    misses: int = 0
    refreshes: int = 0
    # Times a tenant was left to SQL at a generation (too large, or mixed widths).
    skips: int = 0
    # Refreshes that read only the rows the change log named (no id list, no full read).
    incremental: int = 0
    # Rows read by refreshes, all told.
    rows_read: int = 0


class ScanCache:
    """Snapshots of recently queried tenants, within ``budget_bytes``.

    Args:
        datastore: the pool the snapshots are read through.
        budget_bytes: the most all snapshots together may hold (matrix plus metadata).
        rebuild: turns (tenant, id, metadata) into a Memory, or None when it is unreadable —
            the vector store's own, so a snapshot answers exactly what its SQL scan answers.
        scan_threads: threads a large scan is split across (see ScanWorkers); default: the
            CPUs this process may use, at most four.
    """

    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        budget_bytes: int,
        rebuild: Rebuild,
        scan_threads: int | None = None,
    ) -> None:
        self._datastore = datastore
        self._budget_bytes = budget_bytes
        self._rebuild = rebuild
        self._lru = SnapshotLRU(budget_bytes)
        # tenant → the generation at which it did not fit (or could not be held): not retried
        # until the generation moves.
        self._skipped: dict[str, int] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        self._own = OwnWrites()
        self._closed = False
        self.stats = ScanCacheStats()
        self.workers = ScanWorkers(scan_threads)

    @property
    def held_bytes(self) -> int:
        return self._lru.held_bytes

    async def generation(self, tenant: str) -> int:
        """The tenant's generation now; 0 for a tenant that never had a row written."""
        value = await self._datastore.fetchval(GENERATION_SQL, tenant)
        return int(value) if value is not None else 0

    def fresh(self, tenant: str, generation: int) -> TenantSnapshot | None:
        """The tenant's snapshot when it is at ``generation`` or later; otherwise None, and a
        refresh is started in the background. Generations only grow, so a later snapshot holds
        the rows of a moment after the caller read ``generation``: answering from it is what the
        SQL scan would have answered had the query run a moment later, still within the call."""
        snapshot = self._lru.get(tenant)
        if snapshot is not None and snapshot.generation >= generation:
            self._lru.touch(tenant)
            self.stats.hits += 1
            return snapshot
        self.stats.misses += 1
        self._start_refresh(tenant, generation)
        return None

    def memories(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        """Those of ``ids`` the tenant's newest snapshot holds, whatever its generation: a query
        of the tenant just proved it current or refreshed it (see ``Snapshots.memories``)."""
        snapshot = self._lru.get(tenant)
        found = map(snapshot.memory_of, ids) if snapshot is not None else ()
        return [memory for memory in found if memory is not None]

    async def write(self, tenant: str, sql: str, *args: object) -> int:
        """Run one write to the tenant's rows and read its generation in the same transaction:
        the trigger holds the generation row's lock until commit, so the value is this write's
        (what ``apply_own_write`` is given)."""
        async with self._datastore.session() as session, session.transaction():
            await session.execute(sql, *args)
            value = await session.fetchval(GENERATION_SQL, tenant)
        return int(value) if value is not None else 0

    async def current(self, tenant: str, generation: int) -> TenantSnapshot | None:
        """``fresh``, after waiting (at most ``_OWN_WRITE_WAIT_S``) while the snapshot is behind
        ``generation`` and writes of this process to the tenant are between their statement and
        their carry-in, and then (at most ``_REFRESH_WAIT_S``) for a refresh when it is only a
        few generations behind. Own writes arrive within milliseconds, where a miss scans the
        whole tenant in SQL: without the first wait, nearly every concurrent remember's dedup
        query misses (the speed bench; docs/benchmarks.md). Other processes' writes are read
        alone through the change log, so with several API processes writing, one process's
        write does not send every other process's next query to a full scan in SQL."""
        # Only the writes under way now: later ones cannot be what ``generation`` counts, and
        # waiting for them too could last as long as writes keep coming.
        under_way = self._own.under_way(tenant)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_OWN_WRITE_WAIT_S):
                while self._behind(tenant, generation) and not under_way.isdisjoint(
                    self._own.under_way(tenant)
                ):
                    await self._own.change_of(tenant).wait()
        await self._catch_up(tenant, generation)
        return self.fresh(tenant, generation)

    async def _catch_up(self, tenant: str, generation: int) -> None:
        # Twice at most: a refresh already under way may have read the generation before the
        # one this query needs (it started before that write); then one more, of its own.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_REFRESH_WAIT_S):
                for _ in range(2):
                    held = self._lru.get(tenant)
                    if held is None or not 0 < generation - held.generation <= _SMALL_GAP:
                        return
                    self._start_refresh(tenant, generation)
                    task = self._refreshing.get(tenant)
                    if task is None:
                        return
                    await asyncio.shield(task)

    @contextlib.contextmanager
    def own_write(self, tenant: str) -> Iterator[None]:
        """Brackets one write of this process to ``tenant``, from before its statement until it
        is carried in (or found not to be): queries that find the snapshot behind meanwhile
        wait for it (see ``current``)."""
        with self._own.bracket(tenant):
            yield

    def _behind(self, tenant: str, generation: int) -> bool:
        snapshot = self._lru.get(tenant)
        return snapshot is not None and snapshot.generation < generation

    def _start_refresh(self, tenant: str, generation: int) -> None:
        if self._closed or tenant in self._refreshing or self._skipped.get(tenant) == generation:
            return
        task = asyncio.get_running_loop().create_task(self._refresh_quietly(tenant))
        self._refreshing[tenant] = task
        task.add_done_callback(lambda _: self._refreshing.pop(tenant, None))

    async def _refresh_quietly(self, tenant: str) -> None:
        try:
            await self.refresh(tenant)
        except StorageError as error:
            # Queries go on scanning in SQL; the next one that finds no snapshot tries again.
            logger.warning("scan_snapshot_failed", extra={"tenant": tenant, "error": str(error)})

    async def refresh(self, tenant: str) -> TenantSnapshot | None:
        """Bring the tenant's snapshot up to its current generation; None when it is not held
        (too large for the budget, or rows of differing widths).

        Raises:
            StorageError: the database failed.
        """
        started = time.perf_counter()
        current = self._lru.get(tenant)
        async with self._datastore.session() as session:
            async with session.transaction(isolation="repeatable_read", readonly=True):
                step: Step | None = None
                if current is not None:
                    generation = int(await session.fetchval(GENERATION_SQL, tenant) or 0)
                    if generation == current.generation:
                        return current
                    step = await read_changes(
                        session, tenant, current, generation, budget_bytes=self._budget_bytes
                    )
                    if step is not None:
                        self.stats.incremental += 1
                if step is None:
                    step = await read_all(session, tenant, current, budget_bytes=self._budget_bytes)
                if step is None:
                    return current
                generation, removed, added = step
        if added is None:  # too large for the budget before anything was read
            self._skip(tenant, generation)
            return None
        self.stats.rows_read += added.count
        snapshot = await asyncio.to_thread(self._build, tenant, generation, current, removed, added)
        if snapshot is None or snapshot.nbytes > self._budget_bytes:
            self._skip(tenant, generation)
            return None
        self._install(tenant, snapshot)
        self.stats.refreshes += 1
        logger.debug(
            "scan_snapshot_refreshed",
            extra={
                "tenant": tenant,
                "rows": len(snapshot.rows),
                "read": added.count,
                "ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        # An own write that finished while the snapshot was behind may continue this one.
        await self._carry_in_waiting(tenant)
        return self._lru.get(tenant) or snapshot

    def _build(
        self,
        tenant: str,
        generation: int,
        current: TenantSnapshot | None,
        removed_ids: frozenset[str],
        added: AddedRows,
    ) -> TenantSnapshot | None:
        rows = [
            SnapshotRow(
                id=memory_id, memory=self._rebuild(tenant, memory_id, metadata), stored_bytes=size
            )
            for memory_id, metadata, size in added.entries
        ]
        width = added.width if added.width is not None else (current.width if current else 0)
        if added.mixed or (current is not None and current.rows and current.width != width):
            return None  # pgvector refuses to compare widths: leave such a tenant to SQL
        matrix = added.matrix(width)
        if current is None:
            return TenantSnapshot.build(generation, width, rows, matrix, owned=True)
        return current.changed(
            generation,
            removed_ids=removed_ids,
            added=rows,
            added_vectors=matrix,
            owned=True,
        )

    async def apply_own_write(
        self,
        tenant: str,
        generation: int,
        *,
        removed_ids: frozenset[str] = frozenset(),
        added: AddedRow | None = None,
    ) -> None:
        """Carry this process's own write into the tenant's snapshot, without reading anything.

        ``generation`` is what the write's own transaction read after its statement, so it is
        the write's: the snapshot advances only from exactly ``generation − 1``. Writes of this
        process that run at once finish in any order, so one that arrives ahead of an earlier
        one waits for it and is carried in right after it (see ``OwnWrites``). A generation that
        no write here fills (another pod's write) is left to the next query's refresh, which
        drops the waiting writes it passes and carries in those that continue it.
        ``added`` is (id, vector, metadata as stored, stored bytes).
        """
        held = self._lru.get(tenant)
        if held is None or generation <= held.generation:
            return
        self._own.wait_for(
            tenant,
            OwnWrite(generation, removed_ids, added),
            next_generation=held.generation + 1,
        )
        await self._carry_in_waiting(tenant)

    async def _carry_in_waiting(self, tenant: str) -> None:
        """Carry in, in generation order, the waiting own writes that continue the snapshot."""
        while (held := self._lru.get(tenant)) is not None:
            write = self._own.take(tenant, held.generation + 1)
            if write is None or not await self._carry_in(tenant, held, write):
                return

    async def _carry_in(self, tenant: str, held: TenantSnapshot, write: OwnWrite) -> bool:
        """``held`` advanced by ``write`` and installed; False when it was not."""
        rows: list[SnapshotRow] = []
        vectors = np.zeros((0, held.width), dtype=np.float32)
        if write.added is not None:
            memory_id, vector, metadata, stored_bytes = write.added
            if held.rows and vector.shape != (held.width,):
                return False  # a second width: the next refresh leaves the tenant to SQL
            rows = [
                SnapshotRow(memory_id, self._rebuild(tenant, memory_id, metadata), stored_bytes)
            ]
            vectors = vector.reshape(1, -1)
        snapshot = await asyncio.to_thread(
            held.changed,
            write.generation,
            removed_ids=write.removed_ids,
            added=rows,
            added_vectors=vectors,
        )
        if snapshot.nbytes > self._budget_bytes:
            self._skip(tenant, write.generation)
            return False
        self._install(tenant, snapshot)  # unless a refresh put a newer one there meanwhile
        return True

    def _skip(self, tenant: str, generation: int) -> None:
        self.stats.skips += 1
        self._skipped[tenant] = generation
        self._drop(tenant)

    def _install(self, tenant: str, snapshot: TenantSnapshot) -> None:
        evicted = self._lru.install(tenant, snapshot)
        if evicted is None:
            return  # a newer snapshot is held
        self._skipped.pop(tenant, None)
        # Writes waiting for a generation this snapshot already includes are in it.
        self._own.keep_after(tenant, snapshot.generation)
        self._own.notify(tenant)
        for name in evicted:
            self._own.forget(name)

    def _drop(self, tenant: str) -> None:
        self._own.forget(tenant)
        self._lru.drop(tenant)

    async def close(self) -> None:
        """Stop the refreshes in flight (before the pool they use closes) and forget all."""
        self._closed = True
        tasks = list(self._refreshing.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, StorageError):
                await task
        self._lru.clear()
        self._own.close()
        self.workers.close()
