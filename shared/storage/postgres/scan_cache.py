"""Tenant snapshots for the exact scan, kept correct across pods by a per-tenant generation.

Every statement that inserts, updates or deletes rows of ``memories`` bumps its tenants' row in
``memory_generations`` in the same transaction (a trigger, see ``schema``), whoever runs it: this
process, another pod, an older release during a rolling update, or an operator by hand. So a
snapshot read at generation g holds exactly the rows a query would scan for as long as the
tenant's generation is still g, and one primary-key read per recall proves it.

A query never waits for a snapshot. When there is none, or it is behind, the caller scans in SQL
as before and a refresh runs in the background: one per tenant at a time, reading only the rows
added since the snapshot it replaces, in one repeatable-read transaction. Snapshots are evicted
least recently used first to stay within the byte budget; a tenant too large for the budget is
not retried until its generation moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from shared.errors import StorageError
from shared.model import Memory
from shared.storage.postgres._datastore import PostgresDatastore
from shared.storage.postgres.snapshot import (
    ScanWorkers,
    SnapshotRow,
    TenantSnapshot,
    decode_vector,
    vector_width,
)

logger = logging.getLogger(__name__)

GENERATION_SQL: Final = "SELECT generation FROM memory_generations WHERE tenant_id = $1"
# Both in one statement, so they come from one snapshot of the database.
_HEAD_SQL: Final = """
SELECT coalesce((SELECT generation FROM memory_generations WHERE tenant_id = $1), 0)
         AS generation,
       ARRAY(SELECT id FROM memories WHERE tenant_id = $1) AS ids
"""
# vector_send is pgvector's binary output: decoding it is ~50× faster than a Vector per row.
_ROWS_SQL: Final = """
SELECT id, vector_send(embedding) AS vector, metadata, pg_column_size(metadata) AS stored_bytes
FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])
"""
# The ids changed in (from, to]: a generation with no row here is a gap in the log.
_CHANGES_SQL: Final = """
SELECT generation, id FROM memory_changes
WHERE tenant_id = $1 AND generation > $2 AND generation <= $3
"""
# A query that finds the snapshot at most this many generations behind (writes of other
# processes, in a deployment of several) waits up to _REFRESH_WAIT_S for the refresh, which
# then reads only those rows, instead of scanning the whole tenant in SQL.
_SMALL_GAP: Final = 64
_REFRESH_WAIT_S: Final = 0.25
# What a row costs at least beside its vector; lets a refresh skip a tenant that cannot fit
# before reading any of its rows.
_MIN_ROW_BYTES: Final = 400
# Rows per read. asyncpg decodes a result on the event loop; 10,000 rows at once held it for
# ~100 ms, blocking every request of the process meanwhile.
_READ_BATCH_ROWS: Final = 1000

Rebuild = Callable[[str, str, Any], Memory | None]
# (id, vector, metadata as stored, stored bytes) of a row an own write added.
AddedRow = tuple[str, npt.NDArray[np.float32], Mapping[str, Any], int]
# The longest a query waits for this process's own writes to be carried in (see current):
# far longer than one takes to commit and be carried in, short enough that a stuck write does
# not hold queries.
_OWN_WRITE_WAIT_S: Final = 0.25
# Own writes that may wait per tenant for an earlier one to be carried in: more than the
# writes one process runs at once.
_MAX_WAITING_WRITES: Final = 256


@dataclass(frozen=True)
class _OwnWrite:
    generation: int
    removed_ids: frozenset[str]
    added: AddedRow | None


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


class _AddedRows:
    """The rows a refresh reads, taken batch by batch: each vector goes straight into one
    matrix and the driver's records are dropped, so a refresh holds one copy of the vectors
    rather than records, per-row arrays and a stacked matrix at once. Reading 10,000 rows
    peaked at 71 MB of Python heap that way against 26 MB now, and the process kept the peak."""

    def __init__(self, expected: int) -> None:
        self._expected = expected
        self._matrix: npt.NDArray[np.float32] | None = None
        self.entries: list[tuple[str, Any, int]] = []  # id, metadata as stored, stored bytes
        self.width: int | None = None
        self.mixed = False  # rows of differing widths: such a tenant is left to SQL

    @property
    def count(self) -> int:
        return len(self.entries)

    def take(self, records: Sequence[Mapping[str, Any]]) -> None:
        for record in records:
            raw: bytes = record["vector"]
            if self.width is None:
                self.width = vector_width(raw)
                self._matrix = np.empty((self._expected, self.width), dtype=np.float32)
            if self.mixed or vector_width(raw) != self.width or self._matrix is None:
                self.mixed = True
                continue
            self._matrix[len(self.entries)] = decode_vector(raw)
            self.entries.append((record["id"], record["metadata"], int(record["stored_bytes"])))

    def matrix(self, width: int) -> npt.NDArray[np.float32]:
        if self._matrix is None:
            return np.zeros((0, width), dtype=np.float32)
        return self._matrix[: len(self.entries)]


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
        self._snapshots: OrderedDict[str, TenantSnapshot] = OrderedDict()
        self._held_bytes = 0
        # tenant → the generation at which it did not fit (or could not be held): not retried
        # until the generation moves.
        self._skipped: dict[str, int] = {}
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        # tenant → own writes that finished ahead of an earlier one, by generation.
        self._waiting: dict[str, dict[int, _OwnWrite]] = {}
        # tenant → own writes between their statement and their carry-in (see own_write).
        self._writing: dict[str, set[int]] = {}
        self._write_tokens = itertools.count()
        self._changes: dict[str, asyncio.Event] = {}
        self._closed = False
        self.stats = ScanCacheStats()
        self.workers = ScanWorkers(scan_threads)

    @property
    def held_bytes(self) -> int:
        return self._held_bytes

    async def generation(self, tenant: str) -> int:
        """The tenant's generation now; 0 for a tenant that never had a row written."""
        value = await self._datastore.fetchval(GENERATION_SQL, tenant)
        return int(value) if value is not None else 0

    def fresh(self, tenant: str, generation: int) -> TenantSnapshot | None:
        """The tenant's snapshot when it is at ``generation`` or later; otherwise None, and a
        refresh is started in the background. Generations only grow, so a later snapshot holds
        the rows of a moment after the caller read ``generation``: answering from it is what the
        SQL scan would have answered had the query run a moment later, still within the call."""
        snapshot = self._snapshots.get(tenant)
        if snapshot is not None and snapshot.generation >= generation:
            self._snapshots.move_to_end(tenant)
            self.stats.hits += 1
            return snapshot
        self.stats.misses += 1
        self._start_refresh(tenant, generation)
        return None

    def held(self, tenant: str) -> TenantSnapshot | None:
        """The tenant's newest snapshot, whatever its generation (see
        PostgresVectorStore.get_for_recall)."""
        return self._snapshots.get(tenant)

    async def current(self, tenant: str, generation: int) -> TenantSnapshot | None:
        """``fresh``, after waiting (at most ``_OWN_WRITE_WAIT_S``) while the snapshot is behind
        ``generation`` and writes of this process to the tenant are between their statement and
        their carry-in. Those are the writes a concurrent query's generation counts: they arrive
        within milliseconds, where a miss scans the whole tenant in SQL and refreshes. Without
        this wait, 93-127 of every 128 concurrent remembers' dedup queries missed (speed bench,
        8-32 callers, 1,000-50,000 rows); with it, none did."""
        # Only the writes under way now: later ones cannot be what ``generation`` counts, and
        # waiting for them too could last as long as writes keep coming.
        under_way = frozenset(self._writing.get(tenant, ()))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_OWN_WRITE_WAIT_S):
                while self._behind(tenant, generation) and not under_way.isdisjoint(
                    self._writing.get(tenant, ())
                ):
                    await self._change_of(tenant).wait()
        await self._catch_up(tenant, generation)
        return self.fresh(tenant, generation)

    async def _catch_up(self, tenant: str, generation: int) -> None:
        """Wait (at most ``_REFRESH_WAIT_S``) for a refresh when the snapshot is only a few
        generations behind: other processes' writes, which the change log lets a refresh read
        alone. With several API processes writing, each such write used to send the next query
        of every other process to a full scan in SQL."""
        held = self._snapshots.get(tenant)
        if held is None or not 0 < generation - held.generation <= _SMALL_GAP:
            return
        self._start_refresh(tenant, generation)
        task = self._refreshing.get(tenant)
        if task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(task), _REFRESH_WAIT_S)

    @contextlib.contextmanager
    def own_write(self, tenant: str) -> Iterator[None]:
        """Brackets one write of this process to ``tenant``, from before its statement until it
        is carried in (or found not to be): queries that find the snapshot behind meanwhile
        wait for it (see ``current``)."""
        token = next(self._write_tokens)
        self._writing.setdefault(tenant, set()).add(token)
        try:
            yield
        finally:
            writing = self._writing[tenant]
            writing.discard(token)
            if not writing:
                del self._writing[tenant]
            self._notify(tenant)

    def _behind(self, tenant: str, generation: int) -> bool:
        snapshot = self._snapshots.get(tenant)
        return snapshot is not None and snapshot.generation < generation

    def _change_of(self, tenant: str) -> asyncio.Event:
        """An event set at the tenant's next install or end of an own write."""
        event = self._changes.get(tenant)
        if event is None:
            event = self._changes[tenant] = asyncio.Event()
        return event

    def _notify(self, tenant: str) -> None:
        event = self._changes.pop(tenant, None)
        if event is not None:
            event.set()

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
        current = self._snapshots.get(tenant)
        async with self._datastore.session() as session:
            async with session.transaction(isolation="repeatable_read", readonly=True):
                step: tuple[int, frozenset[str], _AddedRows | None] | None = None
                if current is not None:
                    generation = int(await session.fetchval(GENERATION_SQL, tenant) or 0)
                    if generation == current.generation:
                        return current
                    step = await self._read_changes(session, tenant, current, generation)
                if step is None:
                    step = await self._read_all(session, tenant, current)
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
        return self._snapshots.get(tenant, snapshot)

    async def _read_changes(
        self, session: Any, tenant: str, current: TenantSnapshot, generation: int
    ) -> tuple[int, frozenset[str], _AddedRows] | None:
        """The rows changed since ``current`` up to ``generation``, from the change log; None
        when the log has a gap (a full read then)."""
        if generation < current.generation:
            return None
        changes = await session.fetch(_CHANGES_SQL, tenant, current.generation, generation)
        if len({row["generation"] for row in changes}) != generation - current.generation:
            return None  # a truncate, pruned rows, or writes under 0.9.0's trigger
        changed = sorted({row["id"] for row in changes})
        held = current.ids()
        if (len(held) + len(changed)) * _MIN_ROW_BYTES > self._budget_bytes:
            return None
        added = await self._read_rows(session, tenant, changed)
        self.stats.incremental += 1
        # An id changed and still there was rewritten: its old row goes, its new one comes.
        return generation, held & frozenset(changed), added

    async def _read_all(
        self, session: Any, tenant: str, current: TenantSnapshot | None
    ) -> tuple[int, frozenset[str], _AddedRows | None] | None:
        """Every id of the tenant and the rows the snapshot lacks; None when it is current, and
        no rows (None in their place) when the tenant cannot fit the budget."""
        (head,) = await session.fetch(_HEAD_SQL, tenant)
        generation, ids = int(head["generation"]), frozenset(head["ids"])
        if current is not None and current.generation == generation:
            return None
        if len(ids) * _MIN_ROW_BYTES > self._budget_bytes:
            return generation, frozenset(), None
        known = current.ids() if current is not None else frozenset()
        added = await self._read_rows(session, tenant, sorted(ids - known))
        return generation, known - ids, added

    async def _read_rows(self, session: Any, tenant: str, ids: Sequence[str]) -> _AddedRows:
        added = _AddedRows(len(ids))
        for start in range(0, len(ids), _READ_BATCH_ROWS):
            added.take(
                await session.fetch(_ROWS_SQL, tenant, ids[start : start + _READ_BATCH_ROWS])
            )
        return added

    def _build(
        self,
        tenant: str,
        generation: int,
        current: TenantSnapshot | None,
        removed_ids: frozenset[str],
        added: _AddedRows,
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
        one waits for it and is carried in right after it (at most ``_MAX_WAITING_WRITES`` per
        tenant). Before, each such write left the snapshot behind until a refresh read all the
        tenant's ids again, and the queries meanwhile scanned in SQL. A generation that no
        write here fills (another pod's write) is left to the next query's refresh, which drops
        the waiting writes it passes and carries in those that continue it.
        ``added`` is (id, vector, metadata as stored, stored bytes).
        """
        held = self._snapshots.get(tenant)
        if held is None or generation <= held.generation:
            return
        waiting = self._waiting.setdefault(tenant, {})
        if generation == held.generation + 1 or len(waiting) < _MAX_WAITING_WRITES:
            waiting[generation] = _OwnWrite(generation, removed_ids, added)
        await self._carry_in_waiting(tenant)

    async def _carry_in_waiting(self, tenant: str) -> None:
        """Carry in, in generation order, the waiting own writes that continue the snapshot."""
        while (held := self._snapshots.get(tenant)) is not None:
            write = self._waiting.get(tenant, {}).pop(held.generation + 1, None)
            if write is None or not await self._carry_in(tenant, held, write):
                return

    async def _carry_in(self, tenant: str, held: TenantSnapshot, write: _OwnWrite) -> bool:
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
        held = self._snapshots.get(tenant)
        # Generations only grow; a slow refresh must not replace a newer snapshot.
        if held is not None and held.generation > snapshot.generation:
            return
        waiting = self._waiting.pop(tenant, {})
        self._drop(tenant)
        self._skipped.pop(tenant, None)
        self._snapshots[tenant] = snapshot
        self._held_bytes += snapshot.nbytes
        self._notify(tenant)
        # Writes waiting for a generation this snapshot already includes are in it.
        later = {g: write for g, write in waiting.items() if g > snapshot.generation}
        if later:
            self._waiting[tenant] = later
        while self._held_bytes > self._budget_bytes and self._snapshots:
            evicted_tenant, evicted = self._snapshots.popitem(last=False)
            self._held_bytes -= evicted.nbytes
            self._waiting.pop(evicted_tenant, None)

    def _drop(self, tenant: str) -> None:
        self._waiting.pop(tenant, None)
        dropped = self._snapshots.pop(tenant, None)
        if dropped is not None:
            self._held_bytes -= dropped.nbytes

    async def close(self) -> None:
        """Stop the refreshes in flight (before the pool they use closes) and forget all."""
        self._closed = True
        tasks = list(self._refreshing.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, StorageError):
                await task
        self._snapshots.clear()
        self._waiting.clear()
        for tenant in list(self._changes):
            self._notify(tenant)  # queries waiting for own writes go on (and miss)
        self._held_bytes = 0
        self.workers.close()


__all__ = ["GENERATION_SQL", "AddedRow", "ScanCache", "ScanCacheStats"]
