"""One tenant's memories held in memory for an exact scan: pure data and arithmetic, no I/O.

pgvector 0.6 computes ``<=>`` one row at a time in a scalar loop; the same exact scan as
matrix-vector products is several times faster, bound by reading the matrix once per query
(docs/benchmarks.md, "Figures behind speed choices in the code"). A snapshot answers
exactly what the SQL scan answers — every row compared, similarity 1 − cosine distance, a zero
vector last with similarity 0 — for the table as it was at ``generation`` (see
``scan.cache``), so nothing approximate enters recall.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from shared.errors import InvariantError
from shared.model import Hit, Memory
from shared.storage.postgres.scan.workers import SCAN_BLOCK_ROWS, ScanWorkers

# pgvector's binary format (vector_send): int16 width, int16 unused, then big-endian float32s.
_HEADER_BYTES: Final = 4
# A rough per-row cost of the Python objects beside the matrix (the id, the Memory, its dict,
# and the row's entry in its store's positions; measured with tracemalloc).
_ROW_OVERHEAD_BYTES: Final = 450
# Spare room a store gets when its rows are copied: an eighth more rows, at least this many.
_SPARE_FRACTION: Final = 8
_MIN_SPARE_ROWS: Final = 64


def vector_width(raw: bytes) -> int:
    """The width of a vector in ``vector_send(embedding)`` form."""
    return int.from_bytes(raw[:2], "big")


def decode_vector(raw: bytes) -> npt.NDArray[np.float32]:
    """A vector from ``vector_send(embedding)``, as big-endian float32 (a view of ``raw``:
    copy it into a native row, or call ``astype``)."""
    return np.frombuffer(raw, dtype=">f4", count=vector_width(raw), offset=_HEADER_BYTES)


class SnapshotRow(msgspec.Struct, frozen=True, gc=False):
    """One stored memory beside its matrix row; ``memory`` is None when its metadata is
    unreadable — the row still takes its place in the ranking, as it does in the SQL scan.

    Not tracked by the garbage collector (``gc=False``): a row holds only a string, an int and a
    Memory, so it can never be part of a reference cycle, and a tracked row would be one more
    object per memory for every full collection to walk."""

    id: str
    memory: Memory | None
    stored_bytes: int


def _bytes_of(rows: Sequence[SnapshotRow]) -> int:
    return sum(row.stored_bytes + _ROW_OVERHEAD_BYTES for row in rows)


def unit_rows(
    vectors: npt.NDArray[np.float32], *, in_place: bool = False
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Each row scaled to length 1, and which rows have a direction (a zero vector has none).
    ``in_place`` scales ``vectors`` itself rather than a copy: at 50,000 rows a copy is 77 MB."""
    # Row by row, without np.linalg.norm's squared copy of the whole matrix.
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    has_direction = norms > 0
    unit = np.divide(
        vectors,
        norms[:, np.newaxis],
        out=vectors if in_place else np.zeros_like(vectors),
        where=has_direction[:, None],
    )
    return unit, has_direction


class _RowStore:
    """The unit rows (with their direction flags and positions by id) behind one or more
    snapshots, each of which sees a prefix of them, and room to append more.

    Only the snapshot that sees every row written so far may append, into the spare room: a row
    that some snapshot can see is never written again, so scans read their prefix while a write
    appends behind it. Any other change (a removal, or a snapshot that is no longer the newest)
    is made in a new store. So a remember does not copy the whole matrix, a cost that would grow
    with the tenant.
    """

    __slots__ = ("_lock", "directed", "positions", "unit", "used")

    def __init__(
        self,
        unit: npt.NDArray[np.float32],
        directed: npt.NDArray[np.bool_],
        ids: Sequence[str],
    ) -> None:
        self.unit = unit
        self.directed = directed
        # id → row. Entries at or past a snapshot's row count are not that snapshot's rows.
        self.positions = {memory_id: index for index, memory_id in enumerate(ids)}
        self.used = len(ids)
        self._lock = threading.Lock()

    @classmethod
    def gathered(
        cls,
        unit: npt.NDArray[np.float32],
        directed: npt.NDArray[np.bool_],
        keep: npt.NDArray[np.bool_],
        added_unit: npt.NDArray[np.float32],
        added_directed: npt.NDArray[np.bool_],
        ids: Sequence[str],
    ) -> _RowStore:
        """The rows of ``unit`` that ``keep`` marks, then ``added_unit``, copied once into a new
        store with spare room for an eighth as many rows again."""
        count = len(ids)
        capacity = count + max(_MIN_SPARE_ROWS, count // _SPARE_FRACTION)
        room = np.empty((capacity, unit.shape[1]), dtype=np.float32)
        flags = np.zeros(capacity, dtype=bool)
        kept = count - len(added_unit)
        np.compress(keep, unit, axis=0, out=room[:kept])
        room[kept:count] = added_unit
        np.compress(keep, directed, out=flags[:kept])
        flags[kept:count] = added_directed
        return cls(room, flags, ids)

    def claim(self, seen: int, count: int) -> bool:
        """Reserve ``count`` rows after the first ``seen`` for the snapshot that sees ``seen``;
        False unless that snapshot sees every row written and the room is there."""
        with self._lock:
            if self.used != seen or seen + count > len(self.unit):
                return False
            self.used = seen + count
            return True

    def holds(self, memory_id: str, seen: int) -> bool:
        """Whether ``memory_id`` is among the first ``seen`` rows."""
        return self.positions.get(memory_id, seen) < seen


@dataclass(frozen=True, slots=True)
class TenantSnapshot:
    """The rows of one tenant at one generation; row i of ``unit_matrix`` belongs to rows[i]."""

    generation: int
    width: int
    rows: tuple[SnapshotRow, ...]
    unit_matrix: npt.NDArray[np.float32]
    # False for a zero vector: it has no direction, and pgvector's NaN distance sorts it last.
    has_direction: npt.NDArray[np.bool_]
    nbytes: int
    # Almost always True: lets a scan skip the pass that sorts zero vectors last.
    all_directed: bool
    _store: _RowStore = field(repr=False, compare=False)
    # What the rows cost beside the matrix (see _ROW_OVERHEAD_BYTES), kept as rows are appended.
    _row_bytes: int = field(repr=False, compare=False)

    @classmethod
    def build(
        cls,
        generation: int,
        width: int,
        rows: Sequence[SnapshotRow],
        vectors: npt.NDArray[np.float32],
        *,
        owned: bool = False,
    ) -> TenantSnapshot:
        """A snapshot of ``rows`` whose raw vectors are the rows of ``vectors`` (n × width).
        ``owned``: the caller gives ``vectors`` up, and the snapshot scales it in place."""
        if vectors.shape != (len(rows), width):
            raise InvariantError(
                f"expected {len(rows)} vectors of width {width}, got {vectors.shape}"
            )
        unit, has_direction = unit_rows(vectors, in_place=owned)
        rows = tuple(rows)
        store = _RowStore(unit, has_direction, [row.id for row in rows])
        return cls._of(generation, width, rows, store, _bytes_of(rows))

    @classmethod
    def _of(
        cls,
        generation: int,
        width: int,
        rows: tuple[SnapshotRow, ...],
        store: _RowStore,
        row_bytes: int,
        *,
        all_directed: bool | None = None,
    ) -> TenantSnapshot:
        count = len(rows)
        has_direction = store.directed[:count]
        return cls(
            generation=generation,
            width=width,
            rows=rows,
            unit_matrix=store.unit[:count],
            has_direction=has_direction,
            # The whole store, spare room included: it is held as long as any snapshot is.
            nbytes=store.unit.nbytes + store.directed.nbytes + row_bytes,
            all_directed=bool(has_direction.all()) if all_directed is None else all_directed,
            _store=store,
            _row_bytes=row_bytes,
        )

    def ids(self) -> frozenset[str]:
        return frozenset(row.id for row in self.rows)

    def memory_of(self, memory_id: str) -> Memory | None:
        """The memory with this id among this snapshot's rows, or None (absent, or unreadable
        metadata)."""
        position = self._store.positions.get(memory_id)
        if position is None or position >= len(self.rows):
            return None
        row = self.rows[position]
        return row.memory if row.id == memory_id else None

    def changed(
        self,
        generation: int,
        *,
        removed_ids: frozenset[str] = frozenset(),
        added: Sequence[SnapshotRow] = (),
        added_vectors: npt.NDArray[np.float32] | None = None,
        owned: bool = False,
    ) -> TenantSnapshot:
        """This snapshot at a later generation: ``removed_ids`` dropped, ``added`` appended.
        Memories are immutable, so a row that stayed is never read again. ``owned``: the caller
        gives ``added_vectors`` up, and they are scaled in place. This snapshot stays as it is
        for the queries still reading it: rows are appended behind what it sees when it is the
        newest of its store (see ``_RowStore``), otherwise the rows are copied once."""
        if not self.rows and added:
            # An empty tenant's snapshot has no width yet: its first rows set it.
            if added_vectors is None:
                raise InvariantError(f"expected {len(added)} vectors")
            return TenantSnapshot.build(
                generation, added_vectors.shape[1], added, added_vectors, owned=owned
            )
        if added_vectors is None:
            added_vectors = np.zeros((0, self.width), dtype=np.float32)
        if added_vectors.shape != (len(added), self.width):
            raise InvariantError(f"expected {len(added)} vectors of width {self.width}")
        added_unit, added_direction = unit_rows(added_vectors, in_place=owned)
        added = tuple(added)
        seen = len(self.rows)
        store = self._store
        removing = any(store.holds(memory_id, seen) for memory_id in removed_ids)
        if not removing and store.claim(seen, len(added)):
            end = seen + len(added)
            store.unit[seen:end] = added_unit
            store.directed[seen:end] = added_direction
            store.positions.update((row.id, seen + i) for i, row in enumerate(added))
            return TenantSnapshot._of(
                generation,
                self.width,
                self.rows + added,
                store,
                self._row_bytes + _bytes_of(added),
                all_directed=self.all_directed and bool(added_direction.all()),
            )
        keep = np.fromiter((row.id not in removed_ids for row in self.rows), dtype=bool, count=seen)
        rows = tuple(row for row, kept in zip(self.rows, keep, strict=True) if kept) + added
        fresh = _RowStore.gathered(
            self.unit_matrix,
            self.has_direction,
            keep,
            added_unit,
            added_direction,
            [row.id for row in rows],
        )
        return TenantSnapshot._of(generation, self.width, rows, fresh, _bytes_of(rows))

    def _scan(
        self,
        unit_query: npt.NDArray[np.float32],
        similarity: npt.NDArray[np.float32],
        start: int,
        stop: int,
    ) -> None:
        """Similarities of rows [start, stop) into the same slice of ``similarity``."""
        for block in range(start, stop, SCAN_BLOCK_ROWS):
            end = min(stop, block + SCAN_BLOCK_ROWS)
            np.dot(self.unit_matrix[block:end], unit_query, out=similarity[block:end])

    def nearest(
        self, query: npt.NDArray[np.float32], top_k: int, *, workers: ScanWorkers | None = None
    ) -> list[Hit]:
        """The ``top_k`` rows nearest to ``query`` by cosine, nearest first, as the SQL scan
        orders them; rows with unreadable metadata take their slot and are then left out.
        ``workers`` split a large scan across threads; the answer is the same either way."""
        norm = float(np.linalg.norm(query))
        if norm == 0 or query.shape != (self.width,):
            raise InvariantError("the query must be a non-zero vector of the snapshot's width")
        unit_query = (query / norm).astype(np.float32)
        count = len(self.rows)
        similarity = np.empty(count, dtype=np.float32)
        parts = workers.parts(count) if workers is not None else [(0, count)]
        helping = (
            [
                workers.submit(functools.partial(self._scan, unit_query, similarity, lo, hi))
                for lo, hi in parts[1:]
            ]
            if workers is not None
            else []
        )
        try:
            self._scan(unit_query, similarity, *parts[0])
        finally:
            for part in helping:  # each writes its own slice of ``similarity``
                part.result()
        # Beyond the product itself, only the chosen rows are touched: each pass over the whole
        # array costs time in proportion to the tenant.
        if not self.all_directed:
            similarity[~self.has_direction] = -np.inf  # pgvector's NaN distance sorts last
        if count > top_k:
            candidates = np.argpartition(similarity, count - top_k)[count - top_k :]
        else:
            candidates = np.arange(count)
        chosen = candidates[np.argsort(similarity[candidates])[::-1]]
        # Clipped like pgvector's own cosine, so rounding never reports more than 1; a row
        # without a direction reports 0.
        values = similarity[chosen]
        values[np.isneginf(values)] = 0.0
        np.clip(values, -1.0, 1.0, out=values)
        hits: list[Hit] = []
        for index, value in zip(chosen.tolist(), values.tolist(), strict=True):
            memory = self.rows[index].memory
            if memory is not None:
                hits.append(Hit(memory=memory, similarity=value))
        return hits
