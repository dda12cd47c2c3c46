"""Prometheus metrics of the API process. No tenant id and no content ever becomes a label.

shared/ never imports prometheus: the counters report to :class:`PrometheusCounterEvents`, and
the PostgreSQL snapshots keep plain counts that :class:`ScanCacheCollector` reads when /metrics
is scraped, so the hot path pays nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from prometheus_client import REGISTRY, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shared.storage.interfaces import Snapshots

TOOL_CALLS = Counter(
    "mcp_memory_tool_calls_total", "Tool calls by tool and outcome.", ["tool", "outcome"]
)
TOOL_SECONDS = Histogram(
    "mcp_memory_tool_duration_seconds",
    "Tool call latency by tool.",
    ["tool"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12),
)
# ``stage``: the storage operation that outlived STORAGE_TIMEOUT_S (vector_query, object_get,
# ...), or ``tool`` when the whole call outlived TOOL_TIMEOUT_S.
TOOL_TIMEOUTS = Counter(
    "mcp_memory_tool_timeouts_total",
    "Tool calls answered with a timeout, by tool and the stage that ran out of time.",
    ["tool", "stage"],
)

# ``surface``: mcp or ui. ``reason``: wrong_key (checked and wrong), one_at_a_time (another key
# of the address was being held), locked_out (unchecked, the address is locked out).
AUTH_REFUSALS = Counter(
    "mcp_memory_auth_refusals_total",
    "Requests refused for their key, by surface and reason; never a key or an address.",
    ["surface", "reason"],
)


def _latency_by_operation(name: str, of_what: str) -> Histogram:
    return Histogram(
        name,
        f"{of_what} latency by operation.",
        ["operation"],
        buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56),
    )


# Shared by both backends; ``operation`` is the store method (put, query, get, list, cas, ...).
STORAGE_SECONDS = _latency_by_operation(
    "mcp_memory_storage_duration_seconds", "Memory and state store"
)
EMBEDDING_SECONDS = _latency_by_operation("mcp_memory_embedding_duration_seconds", "Embedding")
# A histogram, not a gauge: readers of many tenants observe it, and a gauge would keep only
# whichever tenant was read last. A growing tail means folding is not keeping up.
SHARD_BACKLOG = Histogram(
    "mcp_memory_counter_shard_backlog",
    "Counter shards a reader found above the watermark (not yet folded).",
    buckets=(0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
CAS_CONFLICTS = Counter(
    "mcp_memory_cas_conflicts_total",
    "Compare-and-swap writes that lost to another writer (a retry or a skip follows).",
)
COUNTER_FLUSH_FAILURES = Counter(
    "mcp_memory_counter_flush_failures_total",
    "Counter shard writes that failed; by design their deltas are dropped, never replayed.",
)
COUNTER_FOLD_SECONDS = Histogram(
    "mcp_memory_counter_fold_duration_seconds",
    "On-demand folds of counter shards into merged.json run by this process.",
    buckets=(0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12),
)


class PrometheusCounterEvents:
    """Implements shared.counters.CounterEvents on these metrics."""

    def shard_backlog(self, shards: int) -> None:
        SHARD_BACKLOG.observe(shards)

    def cas_conflict(self) -> None:
        CAS_CONFLICTS.inc()

    def flush_failed(self) -> None:
        COUNTER_FLUSH_FAILURES.inc()

    def fold_seconds(self, seconds: float) -> None:
        COUNTER_FOLD_SECONDS.observe(seconds)


class ScanCacheCollector(Collector):
    """The snapshots' counts. They tell an operator whether PG_SCAN_CACHE_MB is large enough:
    misses that keep pace with hits, or tenants skipped as too large, mean recalls are scanning
    in SQL."""

    def __init__(self, cache: Snapshots) -> None:
        self._cache = cache

    def collect(self) -> Iterable[Metric]:
        stats = self._cache.stats
        queries = CounterMetricFamily(
            "mcp_memory_scan_snapshot_queries",
            "Vector queries answered from an in-process snapshot (hit) or scanned in SQL "
            "because none was at the tenant's generation (miss).",
            labels=["outcome"],
        )
        queries.add_metric(["hit"], stats.hits)
        queries.add_metric(["miss"], stats.misses)
        yield queries
        yield CounterMetricFamily(
            "mcp_memory_scan_snapshot_refreshes",
            "Snapshots read or brought up to date in the background.",
            value=stats.refreshes,
        )
        yield CounterMetricFamily(
            "mcp_memory_scan_snapshot_skips",
            "Tenants left to SQL at a generation: too large for PG_SCAN_CACHE_MB, or rows of "
            "differing widths.",
            value=stats.skips,
        )
        yield GaugeMetricFamily(
            "mcp_memory_scan_snapshot_bytes",
            "Bytes the snapshots hold now (matrix and metadata), within PG_SCAN_CACHE_MB.",
            value=self._cache.held_bytes,
        )


@contextlib.contextmanager
def scan_metrics(cache: Snapshots | None) -> Iterator[None]:
    """Export the stores' snapshots (``Stores.snapshots``) while the block runs; nothing for
    stores without them."""
    if cache is None:
        yield
        return
    collector = ScanCacheCollector(cache)
    REGISTRY.register(collector)
    try:
        yield
    finally:
        REGISTRY.unregister(collector)
