"""tools/call round trip over loopback through the official MCP client, per protocol era.

The server is ``build_app`` with the test catalogue (no storage, no model), so the figure is the
HTTP + MCP layer alone: client serialisation, aiohttp, the SDK kernel and back. ``--tool echo``
(the default) is the bare ``echo`` tool; ``--tool guarded`` is the same tool inside the
catalogue's guard, as every real tool is (argument check, the tool_call log line, two metrics).

By default client and server share this process and its event loop, so each call's figure is the
sum of both sides' work, with caches kept hot by the loop. ``--split`` serves from a child process
with the production JSON logging, as a deployment does, and reports the CPU each side spent per
call: what the official client costs against what the server costs. ``--against DIR`` adds a
second child serving the checkout in DIR (``git archive REV | tar -x -C DIR``) and alternates
calls between the two, so a busy machine slows both alike: the way to compare two revisions here.

    python -m bench.bench_transport [--calls 500] [--tool echo|guarded] [--split | --against DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import psutil
from aiohttp import web
from mcp import Client

from services.api.http.app import build_app
from services.api.tools.arguments import ToolArguments
from services.api.tools.catalogue import guarded
from services.api.tools.definition import ToolContext, ToolDefinition
from services.api.tools.structured import Output, Reply
from shared.process.logs import configure_logging
from tests.api._catalogue import ECHO, TEST_CATALOGUE, catalogue_runtime
from tests.api.conftest import Mode, mcp_session, test_config

MODES: Final[tuple[Mode, ...]] = ("auto", "legacy")
WARM_UP_CALLS: Final = 20
THIS_TREE: Final = Path(__file__).resolve().parent.parent


class EchoArguments(ToolArguments, frozen=True):
    text: str = ""


async def _guarded_echo(backend: None, ctx: ToolContext, arguments: EchoArguments) -> Reply:
    echoed = await ECHO.handler(ctx, {"text": arguments.text})
    return Reply(text=echoed.text, data=Output())


GUARDED = guarded(
    ToolDefinition(
        name="guarded",
        description=ECHO.description,
        arguments=EchoArguments,
        output=Output,
        handle=_guarded_echo,
    ),
    None,
)


async def _call(client: Client, tool: str, text: str) -> None:
    result = await client.call_tool(tool, {"text": text})
    assert result.is_error is False


async def measure(url: str, *, mode: Mode, calls: int, tool: str = "echo") -> list[float]:
    async with mcp_session(url, headers={"X-Tenant-Id": "bench"}, mode=mode) as client:
        for _ in range(WARM_UP_CALLS):  # connection, caches, first-call imports
            await _call(client, tool, "warm")
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            await _call(client, tool, "hello")
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def _summary(label: str, samples: Sequence[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95) - 1]
    return (
        f"{label:6}  calls={len(ordered)}  median={statistics.median(ordered):.2f} ms  "
        f"p95={p95:.2f} ms  min={ordered[0]:.2f} ms"
    )


@contextlib.asynccontextmanager
async def _served() -> AsyncIterator[web.AppRunner]:
    app = build_app(test_config(), open_runtime=catalogue_runtime((*TEST_CATALOGUE, GUARDED)))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield runner
    finally:
        await runner.cleanup()


async def main(calls: int, tool: str) -> None:
    async with _served() as runner:
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/mcp"
        for mode in MODES:
            print(_summary(mode, await measure(url, mode=mode, calls=calls, tool=tool)))


async def serve_until_terminated() -> None:
    """The ``--serve`` child: announce the port on stderr, serve until SIGTERM."""
    configure_logging()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with _served() as runner:
        print(runner.addresses[0][1], file=sys.stderr, flush=True)
        await stop.wait()


@dataclass
class _Side:
    """One server child and what its calls cost."""

    label: str
    child: subprocess.Popen[str]
    url: str
    samples: list[float] = field(default_factory=list)
    client_cpu_s: float = 0.0

    def server_cpu_s(self) -> float:
        times = psutil.Process(self.child.pid).cpu_times()
        return float(times.user + times.system)


def _spawn(label: str, tree: Path) -> _Side:
    """This file run as ``--serve`` with ``tree`` first on the path: that tree's server code."""
    # Logs go to /dev/null: one JSON line per call is written, as in production, but not read.
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve"],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    announced = child.stderr.readline().strip()
    if not announced.isdigit():
        child.kill()
        raise RuntimeError(f"the server child for {tree} did not start: {announced!r}")
    return _Side(label, child, f"http://127.0.0.1:{announced}/mcp")


async def _alternate(sides: Sequence[_Side], *, mode: Mode, calls: int, tool: str) -> None:
    """``calls`` timed calls per side, the sides taking turns (ABBA) so drift hits both alike."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                mcp_session(side.url, headers={"X-Tenant-Id": "bench"}, mode=mode)
            )
            for side in sides
        ]
        for client in clients:
            for _ in range(WARM_UP_CALLS):
                await _call(client, tool, "warm")
        for turn in range(calls):
            order = range(len(sides)) if turn % 2 == 0 else reversed(range(len(sides)))
            for index in order:
                cpu_started, started = time.process_time(), time.perf_counter()
                await _call(clients[index], tool, "hello")
                sides[index].samples.append((time.perf_counter() - started) * 1000)
                sides[index].client_cpu_s += time.process_time() - cpu_started


async def main_split(calls: int, tool: str, against: Path | None) -> None:
    trees = [("this", THIS_TREE)] + ([("other", against.resolve())] if against else [])
    sides: list[_Side] = []
    try:
        for label, tree in trees:
            sides.append(_spawn(label, tree))
        for mode in MODES:
            server_started = [side.server_cpu_s() for side in sides]
            for side in sides:
                side.samples, side.client_cpu_s = [], 0.0
            await _alternate(sides, mode=mode, calls=calls, tool=tool)
            for side, started in zip(sides, server_started, strict=True):
                server_ms = 1000 * (side.server_cpu_s() - started) / calls
                label = f"{mode} {side.label}" if against else mode
                print(
                    f"{_summary(label, side.samples)}  server_cpu={server_ms:.2f} ms/call  "
                    f"client_cpu={1000 * side.client_cpu_s / calls:.2f} ms/call"
                )
    finally:
        for side in sides:
            side.child.terminate()
            side.child.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--tool", choices=("echo", "guarded"), default="echo")
    parser.add_argument("--split", action="store_true", help="serve from a child process")
    parser.add_argument("--against", type=Path, help="also serve this checkout; alternate calls")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve_until_terminated())
    elif args.split or args.against:
        asyncio.run(main_split(args.calls, args.tool, args.against))
    else:
        asyncio.run(main(args.calls, args.tool))
