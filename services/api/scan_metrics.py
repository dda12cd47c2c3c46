"""The PostgreSQL scan cache's own counts, exported at scrape time.

ScanCache keeps plain counters (shared/ never imports prometheus); a collector reads them when
/metrics is scraped, so the hot path pays nothing. They tell an operator whether
PG_SCAN_CACHE_MB is large enough: misses that keep pace with hits, or tenants skipped as too
large, mean recalls are scanning in SQL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from shared.storage.interfaces import Snapshots


class ScanCacheCollector(Collector):
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


__all__ = ["ScanCacheCollector", "scan_metrics"]
