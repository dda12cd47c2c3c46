"""One tenant's memories held in memory for an exact scan: pure data and arithmetic, no I/O.

pgvector 0.6 computes ``<=>`` one row at a time in a scalar loop, about 1.3 µs per 384-d row on
a 2-core EPYC: 13 ms of a recall at 10,000 memories. The same exact scan as matrix-vector
products takes under 3 ms, bound by reading the 15 MB matrix once per query. A snapshot answers
exactly what the SQL scan answers — every row compared, similarity 1 − cosine distance, a zero
vector last with similarity 0 — for the table as it was at ``generation`` (see
``scan_cache``), so nothing approximate enters recall.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from shared.cpus import usable_cpus
from shared.model import Hit, Memory

# pgvector's binary format (vector_send): int16 width, int16 unused, then big-endian float32s.
_HEADER_BYTES: Final = 4
# A rough per-row cost of the Python objects beside the matrix (the id, the Memory, its dict).
_ROW_OVERHEAD_BYTES: Final = 400
# Rows per matrix-vector product. OpenBLAS runs a product this size on the calling thread;
# from ~4,000 rows it splits one over its own workers, which spin while they wait: under load
# they took the cores from the embedding model (a 10,000-row scan went from 2.7 to 7.7 ms and
# the model lost a fifth of its throughput). Scans are split by ScanWorkers instead.
_SCAN_BLOCK_ROWS: Final = 1024
# A scan smaller than this is not split: handing a part to a thread costs ~0.05 ms.
_MIN_ROWS_PER_PART: Final = 4096
# Beyond this many threads a scan is bound by memory bandwidth, not by threads.
_MAX_SCAN_THREADS: Final = 4


class ScanWorkers:
    """Threads a large scan is split across; the calling thread scans one part itself.

    On the 2-core reference machine, 10,000 × 384 took 2.0-2.5 ms on one thread and 0.3-0.9 ms
    on two (more than twice as fast: one core alone does not reach the memory bandwidth). These
    are plain threads that block when idle, so under load a split scan only shares the cores:
    p50 2.7 → 3.0 ms beside a busy model, whose throughput did not drop.
    """

    def __init__(self, threads: int | None = None) -> None:
        """``threads`` in all, the caller's included; default: the CPUs this process can use
        (its container's limit included), at most four."""
        self.threads = max(
            1, threads if threads is not None else min(_MAX_SCAN_THREADS, usable_cpus())
        )
        self._pool = (
            ThreadPoolExecutor(max_workers=self.threads - 1, thread_name_prefix="scan")
            if self.threads > 1
            else None
        )

    def parts(self, rows: int) -> list[tuple[int, int]]:
        """Contiguous row ranges, one per thread that is worth using, block-aligned."""
        count = max(1, min(self.threads, rows // _MIN_ROWS_PER_PART))
        blocks = -(-rows // _SCAN_BLOCK_ROWS)
        bounds = [min(rows, (blocks * i // count) * _SCAN_BLOCK_ROWS) for i in range(count + 1)]
        return [(bounds[i], bounds[i + 1]) for i in range(count)]

    def submit(self, work: Callable[[], None]) -> Future[None]:
        if self._pool is None:
            raise RuntimeError("a one-thread ScanWorkers has no helpers to submit to")
        return self._pool.submit(work)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def vector_width(raw: bytes) -> int:
    """The width of a vector in ``vector_send(embedding)`` form."""
    return int.from_bytes(raw[:2], "big")


def decode_vector(raw: bytes) -> npt.NDArray[np.float32]:
    """A vector from ``vector_send(embedding)``, as big-endian float32 (a view of ``raw``:
    copy it into a native row, or call ``astype``)."""
    return np.frombuffer(raw, dtype=">f4", count=vector_width(raw), offset=_HEADER_BYTES)


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """One stored memory beside its matrix row; ``memory`` is None when its metadata is
    unreadable — the row still takes its place in the ranking, as it does in the SQL scan."""

    id: str
    memory: Memory | None
    stored_bytes: int


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
            raise ValueError(f"expected {len(rows)} vectors of width {width}, got {vectors.shape}")
        unit, has_direction = unit_rows(vectors, in_place=owned)
        return cls._of(generation, width, tuple(rows), unit, has_direction)

    @classmethod
    def _of(
        cls,
        generation: int,
        width: int,
        rows: tuple[SnapshotRow, ...],
        unit: npt.NDArray[np.float32],
        has_direction: npt.NDArray[np.bool_],
    ) -> TenantSnapshot:
        nbytes = unit.nbytes + sum(row.stored_bytes + _ROW_OVERHEAD_BYTES for row in rows)
        return cls(
            generation=generation,
            width=width,
            rows=rows,
            unit_matrix=unit,
            has_direction=has_direction,
            nbytes=nbytes,
            all_directed=bool(has_direction.all()),
        )

    def ids(self) -> frozenset[str]:
        return frozenset(row.id for row in self.rows)

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
        gives ``added_vectors`` up, and they are scaled in place. The new matrix is allocated
        once: this snapshot's stays as it is for the queries still reading it."""
        if not self.rows and added:
            # An empty tenant's snapshot has no width yet: its first rows set it.
            if added_vectors is None:
                raise ValueError(f"expected {len(added)} vectors")
            return TenantSnapshot.build(
                generation, added_vectors.shape[1], added, added_vectors, owned=owned
            )
        if added_vectors is None:
            added_vectors = np.zeros((0, self.width), dtype=np.float32)
        if added_vectors.shape != (len(added), self.width):
            raise ValueError(f"expected {len(added)} vectors of width {self.width}")
        added_unit, added_direction = unit_rows(added_vectors, in_place=owned)
        keep = np.fromiter(
            (row.id not in removed_ids for row in self.rows), dtype=bool, count=len(self.rows)
        )
        rows = tuple(row for row, kept in zip(self.rows, keep, strict=True) if kept)
        unit = np.empty((len(rows) + len(added), self.width), dtype=np.float32)
        np.compress(keep, self.unit_matrix, axis=0, out=unit[: len(rows)])
        unit[len(rows) :] = added_unit
        return TenantSnapshot._of(
            generation,
            self.width,
            rows + tuple(added),
            unit,
            np.concatenate([self.has_direction[keep], added_direction]),
        )

    def _scan(
        self,
        unit_query: npt.NDArray[np.float32],
        similarity: npt.NDArray[np.float32],
        start: int,
        stop: int,
    ) -> None:
        """Similarities of rows [start, stop) into the same slice of ``similarity``."""
        for block in range(start, stop, _SCAN_BLOCK_ROWS):
            end = min(stop, block + _SCAN_BLOCK_ROWS)
            np.dot(self.unit_matrix[block:end], unit_query, out=similarity[block:end])

    def nearest(
        self, query: npt.NDArray[np.float32], top_k: int, *, workers: ScanWorkers | None = None
    ) -> list[Hit]:
        """The ``top_k`` rows nearest to ``query`` by cosine, nearest first, as the SQL scan
        orders them; rows with unreadable metadata take their slot and are then left out.
        ``workers`` split a large scan across threads; the answer is the same either way."""
        norm = float(np.linalg.norm(query))
        if norm == 0 or query.shape != (self.width,):
            raise ValueError("the query must be a non-zero vector of the snapshot's width")
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
        # array costs ~0.1 ms at 10,000 rows, and there used to be four.
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


__all__ = [
    "ScanWorkers",
    "SnapshotRow",
    "TenantSnapshot",
    "decode_vector",
    "unit_rows",
    "vector_width",
]
