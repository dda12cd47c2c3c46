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


class _Series:
    """Makes the compactor's series on one registry, each name under PREFIX."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def counter(self, name: str, help_text: str, *labels: str) -> Counter:
        return Counter(f"{PREFIX}{name}", help_text, labels, registry=self._registry)

    def gauge(self, name: str, help_text: str, *labels: str) -> Gauge:
        return Gauge(f"{PREFIX}{name}", help_text, labels, registry=self._registry)

    def histogram(self, name: str, help_text: str, *labels: str) -> Histogram:
        return Histogram(
            f"{PREFIX}{name}", help_text, labels, buckets=FOLD_BUCKETS_S, registry=self._registry
        )


class CompactorMetrics:
    """Every series the compactor exports; jobs' results are recorded by the runner."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        new = _Series(self.registry)
        self.runs = new.counter(
            "runs_total",
            "Job runs by job and result (ok; partial: some tenants failed; error: the run failed).",
            "job",
            "result",
        )
        self.shards_folded = new.counter("shards_folded_total", "Shards absorbed into merged.json.")
        self.lexicon_shards_folded = new.counter(
            "lexicon_shards_folded_total",
            "Keyword-leg lexicon shards absorbed into their merged.json.",
        )
        self.lexicon_backlog = new.gauge(
            "lexicon_backlog_shards",
            "Lexicon shard objects present, all tenants, after the last fold.",
        )
        self.shards_deleted = new.counter(
            "shards_deleted_total", "Shard objects deleted, by job.", "job"
        )
        self.cas_conflicts = new.counter(
            "cas_conflicts_total",
            "Folds that lost the compare-and-swap on merged.json to another folder.",
        )
        self.tenant_failures = new.counter(
            "tenant_failures_total", "Tenants a job run failed on, by job.", "job"
        )
        self.repairs = new.counter(
            "repairs_total",
            "Half-written memories repaired by the reconcile job, by repair: an index key"
            " restored for a vector or deleted without one, a lexicon entry added or removed.",
            "repair",
        )
        self.expired_deleted = new.counter(
            "expired_deleted_total",
            "Expired memories deleted by the expiry job (they were invisible already).",
        )
        self.store_rows_pruned = new.counter(
            "store_rows_pruned_total",
            "Rows the vector store's upkeep removed (PostgreSQL: change-log rows past an hour).",
        )
        self.backlog = new.gauge(
            "backlog_shards", "Shard objects present, all tenants, after the last fold."
        )
        self.backlog_largest = new.gauge(
            "backlog_largest_tenant_shards",
            "Shard objects present for the tenant with the most, after the last fold.",
        )
        self.fold_seconds = new.histogram("fold_duration_seconds", "Time to fold one tenant.")
        self.job_seconds = new.histogram(
            "job_duration_seconds", "Time for one job run, by job.", "job"
        )
        self.last_success = new.gauge(
            "last_success_timestamp_seconds",
            "Unix time of the last run that completed without error, by job.",
            "job",
        )
        self._create_labelled_series()

    def _create_labelled_series(self) -> None:
        """Every labelled series from the start, so a scrape shows zeros before the first run."""
        for repair in REPAIRS:
            self.repairs.labels(repair=repair)
        for job in JOBS:
            for result in RESULTS:
                self.runs.labels(job=job, result=result)
            self.shards_deleted.labels(job=job)
            self.tenant_failures.labels(job=job)
            self.job_seconds.labels(job=job)
            self.last_success.labels(job=job)
