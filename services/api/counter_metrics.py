"""The API's metrics as the counters' observer (shared/ never imports prometheus)."""

from __future__ import annotations

from services.api import metrics


class PrometheusCounterEvents:
    """Implements shared.counters.CounterEvents on the API's Prometheus metrics."""

    def shard_backlog(self, shards: int) -> None:
        metrics.SHARD_BACKLOG.observe(shards)

    def cas_conflict(self) -> None:
        metrics.CAS_CONFLICTS.inc()

    def flush_failed(self) -> None:
        metrics.COUNTER_FLUSH_FAILURES.inc()

    def fold_seconds(self, seconds: float) -> None:
        metrics.COUNTER_FOLD_SECONDS.observe(seconds)
