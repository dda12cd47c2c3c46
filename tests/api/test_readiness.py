"""``GET /ready`` reflects storage: 200 while the database answers, 503 within the timeout once it
does not, while ``/health`` (liveness) stays 200. Against the real runtime and a real PostgreSQL
database that is dropped under it."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import httpx2
import mcp_types as types
from aiohttp import web

from services.api.http.app import build_app
from services.api.runtime import open_runtime
from services.api.storage_probe import READY_TIMEOUT_S
from shared.config import load_config
from tests.api.conftest import mcp_session
from tests.conftest import run_admin


async def test_ready_follows_the_database_and_health_does_not(
    pg_server_url: str, pg_url: str
) -> None:
    config = load_config({"DATABASE_URL": pg_url, "EMBEDDING_PROVIDER": "local"})
    runner = web.AppRunner(build_app(config, open_runtime=open_runtime), shutdown_timeout=5)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base = f"http://127.0.0.1:{runner.addresses[0][1]}"
        async with httpx2.AsyncClient(timeout=30) as http:
            ready = await http.get(f"{base}/ready")
            assert (ready.status_code, ready.json()) == (200, {"status": "ready"})

            database = urlsplit(pg_url).path.lstrip("/")
            run_admin(pg_server_url, f'DROP DATABASE "{database}" WITH (FORCE)')
            started = time.monotonic()
            down = await http.get(f"{base}/ready")
            assert time.monotonic() - started < READY_TIMEOUT_S + 1
            assert down.status_code == 503
            assert down.headers["Retry-After"] == "5"
            assert down.json()["status"] == "unavailable"
            # Which store failed, and no connection string, host or port, in what a prober or a
            # log scraper reads.
            assert "PostgreSQL" in down.json()["reason"]
            for leak in ("127.0.0.1", "postgres://", "postgresql://", "/tmp/", ".s.PGSQL"):
                assert leak not in down.text, down.text
            assert (await http.get(f"{base}/health")).status_code == 200
        # A tool call meanwhile is a tool error that names no host, port or URL either.
        async with mcp_session(f"{base}/mcp", headers={"X-Memory-Tenant": "acme"}) as client:
            result = await client.call_tool("recall", {"query": "anything"})
        (content,) = result.content
        assert result.is_error and isinstance(content, types.TextContent)
        assert content.text.startswith("Error: the memory store could not complete this request")
        assert "PostgreSQL" in content.text
        for leak in ("127.0.0.1", "postgres://", "postgresql://", "/tmp/", ".s.PGSQL"):
            assert leak not in content.text, content.text
    finally:
        await runner.cleanup()
