"""Prometheus metrics of the compactor, on a registry of its own. No tenant ever becomes a label:
tenants are unbounded, and a per-tenant series would grow without limit."""

from __future__ import annotations

from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

PREFIX: Final = "mcp_memory_compactor_"
JOBS: Final = ("fold", "gc", "reconcile", "expire")
REPAIRS: Final = ("key_restored", "key_deleted", "lexicon_added", "lexicon_removed")
RESULTS: Final = ("ok", "partial", "error")
FOLD_BUCKETS_S: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class CompactorMetrics:
    """Every series the compactor exports; jobs' results are recorded by the runner."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.runs = Counter(
            f"{PREFIX}runs_total",
            "Job runs by job and result (ok; partial: some tenants failed; error: the run failed).",
            ["job", "result"],
            registry=r,
        )
        self.shards_folded = Counter(
            f"{PREFIX}shards_folded_total", "Shards absorbed into merged.json.", registry=r
        )
        self.lexicon_shards_folded = Counter(
            f"{PREFIX}lexicon_shards_folded_total",
            "Keyword-leg lexicon shards absorbed into their merged.json.",
            registry=r,
        )
        self.lexicon_backlog = Gauge(
            f"{PREFIX}lexicon_backlog_shards",
            "Lexicon shard objects present, all tenants, after the last fold.",
            registry=r,
        )
        self.shards_deleted = Counter(
            f"{PREFIX}shards_deleted_total", "Shard objects deleted, by job.", ["job"], registry=r
        )
        self.cas_conflicts = Counter(
            f"{PREFIX}cas_conflicts_total",
            "Folds that lost the compare-and-swap on merged.json to another folder.",
            registry=r,
        )
        self.tenant_failures = Counter(
            f"{PREFIX}tenant_failures_total",
            "Tenants a job run failed on, by job.",
            ["job"],
            registry=r,
        )
        self.repairs = Counter(
            f"{PREFIX}repairs_total",
            "Half-written memories repaired by the reconcile job, by repair: an index key"
            " restored for a vector or deleted without one, a lexicon entry added or removed.",
            ["repair"],
            registry=r,
        )
        self.expired_deleted = Counter(
            f"{PREFIX}expired_deleted_total",
            "Expired memories deleted by the expiry job (they were invisible already).",
            registry=r,
        )
        self.store_rows_pruned = Counter(
            f"{PREFIX}store_rows_pruned_total",
            "Rows the vector store's upkeep removed (PostgreSQL: change-log rows past an hour).",
            registry=r,
        )
        self.backlog = Gauge(
            f"{PREFIX}backlog_shards",
            "Shard objects present, all tenants, after the last fold.",
            registry=r,
        )
        self.backlog_largest = Gauge(
            f"{PREFIX}backlog_largest_tenant_shards",
            "Shard objects present for the tenant with the most, after the last fold.",
            registry=r,
        )
        self.fold_seconds = Histogram(
            f"{PREFIX}fold_duration_seconds",
            "Time to fold one tenant.",
            buckets=FOLD_BUCKETS_S,
            registry=r,
        )
        self.job_seconds = Histogram(
            f"{PREFIX}job_duration_seconds",
            "Time for one job run, by job.",
            ["job"],
            buckets=FOLD_BUCKETS_S,
            registry=r,
        )
        self.last_success = Gauge(
            f"{PREFIX}last_success_timestamp_seconds",
            "Unix time of the last run that completed without error, by job.",
            ["job"],
            registry=r,
        )
        for repair in REPAIRS:
            self.repairs.labels(repair=repair)
        for job in JOBS:
            for result in RESULTS:
                self.runs.labels(job=job, result=result)
            self.shards_deleted.labels(job=job)
            self.tenant_failures.labels(job=job)
            self.job_seconds.labels(job=job)
            self.last_success.labels(job=job)
