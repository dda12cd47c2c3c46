"""The compactor's jobs called directly ("burst mode"): no scheduler, no sleeping."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import generate_latest

from services.compactor.jobs import EXPIRE, FOLD, GC, JOBS, RECONCILE, JobContext, JobRunner
from services.compactor.jobs.fold_shards import fold_shards
from services.compactor.jobs.gc_shards import gc_shards
from services.compactor.metrics import JOBS as METRIC_JOBS
from services.compactor.metrics import CompactorMetrics
from shared.counters import COUNTER_LAYOUT, COUNTER_LOG, encode_merged
from shared.counters.reader import read_merged
from shared.errors import StorageUnavailableError
from shared.lexical.segments import (
    LEXICON_LAYOUT,
    LexiconShard,
    MergedLexicon,
    decode_merged,
    encode,
)
from shared.memories.expiry import Expirer
from shared.memories.reconcile import Reconciler
from shared.memories.repair_context import RepairContext
from shared.model import Memory, index_key, index_prefix, iso_ms, new_ulid
from shared.model.counters import MergedCounters
from shared.storage import interfaces
from shared.storage.interfaces import ObjectStore, StoredObject, VectorStore
from shared.storage.shardlog import TenantBacklog
from tests.counters._faults import FaultyStore, SimulatedCrashError
from tests.counters._names import name_at
from tests.counters.test_tracker import LAG_MS, START_MS, write_old_shards


def context(objects: ObjectStore, vectors: VectorStore | None = None) -> JobContext:
    return JobContext(
        objects=objects,
        clock_ms=lambda: START_MS,
        lag_ms=LAG_MS,
        reconciler=reconciler(vectors, objects) if vectors is not None else None,
        expirer=expirer(vectors, objects) if vectors is not None else None,
    )


def expirer(vectors: VectorStore, objects: ObjectStore) -> Expirer:
    return Expirer(repair_context(vectors, objects))


def reconciler(vectors: VectorStore, objects: ObjectStore) -> Reconciler:
    return Reconciler(repair_context(vectors, objects))


def repair_context(vectors: VectorStore, objects: ObjectStore) -> RepairContext:
    return RepairContext(
        vectors=vectors,
        objects=objects,
        process_id="compactor-test",
        clock_ms=lambda: START_MS,
        lag_ms=LAG_MS,
    )


async def test_scan_reads_names_only_and_counts_shards_behind_the_lag(
    object_store: ObjectStore,
) -> None:
    await write_old_shards(object_store, "a", count=3, at_ms=START_MS - LAG_MS)
    await write_old_shards(object_store, "b", count=2, at_ms=START_MS)
    await object_store.put(COUNTER_LAYOUT.merged_key("c"), encode_merged(MergedCounters()))
    await object_store.put(COUNTER_LAYOUT.shard_key("d", "not-a-ulid.json"), "{}")
    assert await COUNTER_LOG.backlog(object_store, now_ms=START_MS, lag_ms=LAG_MS) == [
        TenantBacklog(tenant="a", shards=3, behind_lag=3),
        TenantBacklog(tenant="b", shards=2, behind_lag=0),
        TenantBacklog(tenant="d", shards=1, behind_lag=0),
    ]


async def test_scan_pages_through_every_key(
    object_store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(interfaces, "LIST_PAGE_KEYS", 10)
    await asyncio.gather(
        *(
            object_store.put(
                COUNTER_LAYOUT.shard_key(f"t{i % 3}", name_at(START_MS - LAG_MS, suffix=i)), "{}"
            )
            for i in range(35)
        )
    )
    backlog = await COUNTER_LOG.backlog(object_store, now_ms=START_MS, lag_ms=LAG_MS)
    assert [entry.behind_lag for entry in backlog] == [12, 12, 11]


async def test_fold_job_folds_any_tenant_with_one_old_shard_regardless_of_threshold(
    object_store: ObjectStore,
) -> None:
    await write_old_shards(object_store, "a", count=1, at_ms=START_MS - LAG_MS)
    await write_old_shards(object_store, "b", count=4, at_ms=START_MS - LAG_MS)
    await write_old_shards(object_store, "young", count=2, at_ms=START_MS)
    result = await fold_shards(context(object_store))
    assert (result.tenants, result.shards_folded, result.shards_deleted) == (2, 5, 5)
    assert (result.backlog_shards, result.largest_backlog_shards) == (2, 2)
    assert len(result.fold_durations_s) == 2
    for tenant, total in (("a", 1), ("b", 4)):
        assert (await read_merged(object_store, tenant)).merged.counts["m"].access == total
    assert await object_store.get(COUNTER_LAYOUT.merged_key("young")) is None
    again = await fold_shards(context(object_store))
    assert again.shards_folded == 0


async def test_fold_job_folds_lexicon_shards_behind_the_lag_and_leaves_younger_ones(
    object_store: ObjectStore,
) -> None:
    """The keyword leg's shards are folded by the same job, once a backfill made merged.json."""
    await object_store.put(LEXICON_LAYOUT.merged_key("kw"), encode(MergedLexicon()))
    old = [name_at(START_MS - LAG_MS, suffix=i) for i in range(3)]
    young = name_at(START_MS, suffix=9)
    for i, name in enumerate([*old, young]):
        shard = LexiconShard(add={f"m{i}": [{"e1042": 1, "cache": 1}]})
        await object_store.put(LEXICON_LAYOUT.shard_key("kw", name), encode(shard))
    result = await fold_shards(context(object_store))
    assert (result.lexicon_tenants, result.lexicon_shards_folded) == (1, 3)
    assert result.lexicon_backlog_shards == 1
    stored = await object_store.get(LEXICON_LAYOUT.merged_key("kw"))
    assert stored is not None
    merged = decode_merged(stored.body)
    assert merged is not None and merged.watermark == old[-1]
    assert set(merged.docs) == {"m0", "m1", "m2"}
    assert await object_store.get(LEXICON_LAYOUT.shard_key("kw", young)) is not None
    assert all([await object_store.get(LEXICON_LAYOUT.shard_key("kw", n)) is None for n in old])


class _BrokenTenant(FaultyStore):
    """Reads of one tenant's merged.json fail; everything else is the real store."""

    def __init__(self, inner: ObjectStore, *, tenant: str) -> None:
        super().__init__(inner)
        self.broken_key = COUNTER_LAYOUT.merged_key(tenant)

    async def get(self, key: str) -> StoredObject | None:
        if key == self.broken_key:
            raise StorageUnavailableError("simulated outage")
        return await super().get(key)


async def test_one_failing_tenant_does_not_stop_the_others(
    object_store: ObjectStore, caplog: pytest.LogCaptureFixture
) -> None:
    for tenant in ("a", "b", "c"):
        await write_old_shards(object_store, tenant, count=2, at_ms=START_MS - LAG_MS)
    broken = _BrokenTenant(object_store, tenant="b")
    result = await fold_shards(context(broken))
    assert (result.tenants, result.tenants_failed, result.shards_folded) == (3, 1, 4)
    assert [r.__dict__.get("tenant") for r in caplog.records if r.levelname == "ERROR"] == ["b"]
    gc = await gc_shards(context(broken))
    assert gc.tenants_failed == 1


async def test_gc_job_removes_what_a_crashed_fold_left_behind(object_store: ObjectStore) -> None:
    await write_old_shards(object_store, "t", count=3, at_ms=START_MS - LAG_MS)
    crashing = FaultyStore(object_store, crash_delete_probability=1.0)
    with pytest.raises(SimulatedCrashError):
        await fold_shards(context(crashing))  # the crash is not a tenant failure: it kills the run
    assert len(await object_store.list(COUNTER_LAYOUT.shard_prefix("t"))) == 3
    result = await gc_shards(context(object_store))
    assert (result.tenants, result.shards_deleted) == (1, 3)
    assert await object_store.list(COUNTER_LAYOUT.shard_prefix("t")) == []
    assert (await read_merged(object_store, "t")).merged.counts["m"].access == 3


async def test_gc_job_runs_the_backends_housekeeping_and_counts_what_it_removed(
    object_store: ObjectStore,
) -> None:
    """The housekeeping comes in the stores bundle (``Stores.housekeeping``: PostgreSQL prunes
    its change log), not through the vector store."""
    runs: list[int] = []

    async def housekeeping() -> int:
        runs.append(7)
        return 7

    ctx = JobContext(
        objects=object_store, clock_ms=lambda: START_MS, lag_ms=LAG_MS, housekeeping=housekeeping
    )
    assert (await gc_shards(ctx)).store_rows_pruned == 7 and runs == [7]
    assert (await gc_shards(context(object_store))).store_rows_pruned == 0  # nothing to keep up


def sample(metrics: CompactorMetrics, name: str, labels: dict[str, str] | None = None) -> float:
    value = metrics.registry.get_sample_value(name, labels or {})
    assert value is not None, name
    return value


async def test_runner_records_results_in_metrics(
    object_store: ObjectStore, vector_store: VectorStore
) -> None:
    await write_old_shards(object_store, "a", count=2, at_ms=START_MS - LAG_MS)
    await write_old_shards(object_store, "b", count=1, at_ms=START_MS)
    # One key a killed remember left without its vector, for the reconcile job to delete.
    orphan = Memory(
        id=new_ulid(START_MS - 2 * LAG_MS),
        tenant="a",
        content="never written",
        created_at=iso_ms(START_MS - 2 * LAG_MS),
    )
    await object_store.put(index_key(orphan), "")
    metrics = CompactorMetrics()
    runner = JobRunner(context(object_store, vector_store), metrics)
    await runner.run(FOLD)
    await runner.run(GC)
    reconciled = await runner.run(RECONCILE)
    p = "mcp_memory_compactor_"
    assert sample(metrics, f"{p}runs_total", {"job": "fold", "result": "ok"}) == 1
    assert sample(metrics, f"{p}runs_total", {"job": "gc", "result": "ok"}) == 1
    assert sample(metrics, f"{p}shards_folded_total") == 2
    assert sample(metrics, f"{p}shards_deleted_total", {"job": "fold"}) == 2
    assert sample(metrics, f"{p}backlog_shards") == 1
    assert sample(metrics, f"{p}backlog_largest_tenant_shards") == 1
    assert sample(metrics, f"{p}fold_duration_seconds_count") == 1
    assert sample(metrics, f"{p}last_success_timestamp_seconds", {"job": "fold"}) > 0
    assert reconciled is not None and reconciled.tenants == 1
    assert sample(metrics, f"{p}runs_total", {"job": "reconcile", "result": "ok"}) == 1
    assert sample(metrics, f"{p}repairs_total", {"repair": "key_deleted"}) == 1
    assert sample(metrics, f"{p}repairs_total", {"repair": "key_restored"}) == 0
    assert await object_store.list(index_prefix("a")) == []
    label_names = {
        name for family in metrics.registry.collect() for s in family.samples for name in s.labels
    }
    assert label_names <= {"job", "result", "le", "repair"}
    assert generate_latest(metrics.registry).decode().count("mcp_memory_compactor_") > 20


class _Unlistable(FaultyStore):
    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        raise StorageUnavailableError("simulated outage")


async def test_a_failed_run_is_counted_as_an_error_and_not_a_success(
    object_store: ObjectStore, vector_store: VectorStore
) -> None:
    metrics = CompactorMetrics()
    unlistable = _Unlistable(object_store)
    runner = JobRunner(context(unlistable, vector_store), metrics)
    for job in JOBS:
        assert await runner.run(job) is None
    for name in ("fold", "gc", "reconcile", "expire"):
        labels = {"job": name, "result": "error"}
        assert sample(metrics, "mcp_memory_compactor_runs_total", labels) == 1
        assert (
            sample(metrics, "mcp_memory_compactor_last_success_timestamp_seconds", {"job": name})
            == 0
        )


def test_every_job_of_the_table_has_its_metric_series_and_a_distinct_schedule_id() -> None:
    assert [job.name for job in JOBS] == list(METRIC_JOBS)
    assert len({job.schedule_id for job in JOBS}) == len(JOBS)
    assert EXPIRE in JOBS
