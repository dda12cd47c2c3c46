"""The compactor's own small HTTP server: /metrics for Prometheus, /health for the probe."""

from __future__ import annotations

from aiohttp import web
from prometheus_client.aiohttp import make_aiohttp_handler

from services.compactor.metrics import CompactorMetrics


async def _health(_request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def build_metrics_app(metrics: CompactorMetrics) -> web.Application:
    app = web.Application()
    app.router.add_get("/metrics", make_aiohttp_handler(metrics.registry))
    app.router.add_get("/health", _health)
    return app
