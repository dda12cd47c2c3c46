"""What a refresh reads, in one repeatable-read transaction: the generation, then either only
the rows the change log names since the held snapshot, or every id and the rows it lacks; and
the pruning that keeps the change log short."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from shared.storage.postgres._datastore import PostgresDatastore
from shared.storage.postgres.scan.snapshot import TenantSnapshot, decode_vector, vector_width

GENERATION_SQL: Final = "SELECT generation FROM memory_generations WHERE tenant_id = $1"
# Both in one statement, so they come from one snapshot of the database.
HEAD_SQL: Final = """
SELECT coalesce((SELECT generation FROM memory_generations WHERE tenant_id = $1), 0)
         AS generation,
       ARRAY(SELECT id FROM memories WHERE tenant_id = $1) AS ids
"""
# vector_send is pgvector's binary output: decoding it is far faster than a Vector per row.
ROWS_SQL: Final = """
SELECT id, vector_send(embedding) AS vector, metadata, pg_column_size(metadata) AS stored_bytes
FROM memories WHERE tenant_id = $1 AND id = ANY($2::text[])
"""
# The ids changed in (from, to]: a generation with no row here is a gap in the log.
CHANGES_SQL: Final = """
SELECT generation, id FROM memory_changes
WHERE tenant_id = $1 AND generation > $2 AND generation <= $3
"""
# How long the change log keeps a row. A snapshot further behind than that is brought forward
# by a full read (the log then has a gap).
CHANGE_LOG_RETENTION_S: Final = 3600.0
_PRUNE_CHANGES_SQL: Final = (
    "DELETE FROM memory_changes WHERE changed_at < now() - make_interval(secs => $1)"
)
# What a row costs at least beside its vector; lets a refresh skip a tenant that cannot fit
# before reading any of its rows.
MIN_ROW_BYTES: Final = 400
# Rows per read. asyncpg decodes a result on the event loop; a whole tenant at once would hold
# it long enough to stall every request of the process (docs/benchmarks.md).
READ_BATCH_ROWS: Final = 1000


# What one read step found: the generation it reached, the ids to drop from the held snapshot,
# and the rows to add (None: the tenant cannot fit the budget, nothing was read).
Step = tuple[int, frozenset[str], "AddedRows | None"]


class AddedRows:
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


async def read_changes(
    session: Any, tenant: str, current: TenantSnapshot, generation: int, *, budget_bytes: int
) -> tuple[int, frozenset[str], AddedRows] | None:
    """The rows changed since ``current`` up to ``generation``, from the change log; None
    when the log has a gap (a truncate, pruned rows, writes under 0.9.0's trigger) or the
    tenant would not fit: a full read then."""
    if generation < current.generation:
        return None
    changes = await session.fetch(CHANGES_SQL, tenant, current.generation, generation)
    if len({row["generation"] for row in changes}) != generation - current.generation:
        return None
    changed = sorted({row["id"] for row in changes})
    held = current.ids()
    if (len(held) + len(changed)) * MIN_ROW_BYTES > budget_bytes:
        return None
    added = await read_rows(session, tenant, changed)
    # An id changed and still there was rewritten: its old row goes, its new one comes.
    return generation, held & frozenset(changed), added


async def read_all(
    session: Any, tenant: str, current: TenantSnapshot | None, *, budget_bytes: int
) -> Step | None:
    """Every id of the tenant and the rows the snapshot lacks; None when it is current, and
    no rows (None in their place) when the tenant cannot fit the budget."""
    (head,) = await session.fetch(HEAD_SQL, tenant)
    generation, ids = int(head["generation"]), frozenset(head["ids"])
    if current is not None and current.generation == generation:
        return None
    if len(ids) * MIN_ROW_BYTES > budget_bytes:
        return generation, frozenset(), None
    known = current.ids() if current is not None else frozenset()
    added = await read_rows(session, tenant, sorted(ids - known))
    return generation, known - ids, added


async def read_rows(session: Any, tenant: str, ids: Sequence[str]) -> AddedRows:
    added = AddedRows(len(ids))
    for start in range(0, len(ids), READ_BATCH_ROWS):
        added.take(await session.fetch(ROWS_SQL, tenant, ids[start : start + READ_BATCH_ROWS]))
    return added


async def prune_change_log(datastore: PostgresDatastore) -> int:
    """Delete the change log's rows older than ``CHANGE_LOG_RETENTION_S``; how many. The
    compactor's gc job runs it (``Stores.housekeeping``), whether or not any process holds
    snapshots: the trigger logs every write."""
    status = await datastore.execute(_PRUNE_CHANGES_SQL, CHANGE_LOG_RETENTION_S)
    return int(status.rsplit(" ", 1)[-1]) if status and status.startswith("DELETE") else 0
