"""tools/call round trip over loopback through the official MCP client, per protocol era.

The server is ``build_app`` with the test catalogue's ``echo`` tool (no storage, no model), so the
figure is the HTTP + MCP layer alone: client serialisation, aiohttp, the SDK kernel and back.

    python -m bench.bench_transport [--calls 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from aiohttp import web

from services.api.app import build_app
from tests.api._catalogue import catalogue_runtime
from tests.api.conftest import Mode, mcp_session, test_config


async def measure(url: str, *, mode: Mode, calls: int) -> list[float]:
    async with mcp_session(url, headers={"X-Tenant-Id": "bench"}, mode=mode) as client:
        for _ in range(20):  # warm-up: connection, caches, first-call imports
            await client.call_tool("echo", {"text": "warm"})
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            result = await client.call_tool("echo", {"text": "hello"})
            samples.append((time.perf_counter() - started) * 1000)
            assert result.is_error is False
    return samples


async def main(calls: int) -> None:
    app = build_app(test_config(), open_runtime=catalogue_runtime())
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/mcp"
    try:
        for mode in ("auto", "legacy"):
            samples = sorted(await measure(url, mode=mode, calls=calls))
            p95 = samples[int(len(samples) * 0.95) - 1]
            print(
                f"{mode:6}  calls={calls}  median={statistics.median(samples):.2f} ms  "
                f"p95={p95:.2f} ms  min={samples[0]:.2f} ms"
            )
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    asyncio.run(main(parser.parse_args().calls))
