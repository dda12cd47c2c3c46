"""Prometheus metrics of the API process. No tenant id and no content ever becomes a label."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

TOOL_CALLS = Counter(
    "mcp_memory_tool_calls_total", "Tool calls by tool and outcome.", ["tool", "outcome"]
)
TOOL_SECONDS = Histogram(
    "mcp_memory_tool_duration_seconds",
    "Tool call latency by tool.",
    ["tool"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12),
)
