"""Recall (or remember) p50 of two checkouts against each other, in alternating rounds on the
same machine.

    python bench/paired_recall.py --data /work/shared/bench-data \\
        --baseline /path/to/old-checkout --candidate /path/to/new-checkout [--memories 10000]
    python bench/paired_recall.py ... --tool remember   # new LoCoMo-like texts, never stored

Each checkout must have its own ``.venv`` with the project installed (``pip install -e .``):
its own code preloads its own data dir (in a child process of its own interpreter, through its
own ``bench._inproc.preload``) and serves it (its own ``mcp-memory-api --local``). Both servers
then run side by side and this process times ``recall`` through the official MCP client,
concurrency 1, the same LoCoMo questions on both, alternating which goes first each round. On a
shared machine the load moves between rounds; alternating keeps it off the ratio, which is the
median of one side's round p50s over the other's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._client import run_load
from bench._data import MemoryTexts, load_locomo
from bench._server import exit_on_sigterm, free_port, server_env, tied_to_runner

TENANT: Final = "paired-recall"
HEALTH_WAIT_S: Final = 180.0

# Run in the checkout's own interpreter, from its own directory: its preload, its storage code.
PRELOAD: Final = """
import asyncio, sys
from pathlib import Path
from bench._data import MemoryTexts, load_locomo
from bench._inproc import open_local, preload

async def main(data, data_dir, tenant, count):
    texts = MemoryTexts(load_locomo(Path(data)))
    async with open_local(Path(data_dir)) as local:
        await preload(local, tenant, texts.stored, range(count), cache={})

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""


async def _preload(checkout: Path, data: Path, data_dir: Path, memories: int) -> None:
    process = await asyncio.create_subprocess_exec(
        str(checkout / ".venv" / "bin" / "python"),
        "-c",
        PRELOAD,
        str(data),
        str(data_dir),
        TENANT,
        str(memories),
        cwd=checkout,
        env=server_env(),
        **tied_to_runner(),
    )
    if await process.wait() != 0:
        raise SystemExit(f"preloading {checkout} failed")


@contextlib.asynccontextmanager
async def _serving(checkout: Path, data_dir: Path) -> AsyncIterator[str]:
    """The checkout's own API on ``data_dir``; yields its MCP endpoint."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        str(checkout / ".venv" / "bin" / "mcp-memory-api"),
        "--local",
        "--data-dir",
        str(data_dir),
        "--port",
        str(port),
        cwd=checkout,
        env=server_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        **tied_to_runner(),
    )
    try:
        await _wait_healthy(f"http://127.0.0.1:{port}/health", process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()


async def _wait_healthy(url: str, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + HEALTH_WAIT_S
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise SystemExit(f"the API at {url} exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.5)
    raise SystemExit(f"the API at {url} was not healthy within {HEALTH_WAIT_S:.0f} s")


async def main(args: argparse.Namespace) -> None:
    conversations = load_locomo(args.data)
    questions = [q.text for c in conversations for q in c.questions]
    texts = MemoryTexts(conversations)
    sides = {"baseline": args.baseline.resolve(), "candidate": args.candidate.resolve()}
    with tempfile.TemporaryDirectory(prefix="paired-recall-") as scratch:
        dirs = {name: Path(scratch) / name for name in sides}
        for name, checkout in sides.items():
            print(f"preloading {args.memories} memories with {checkout}", file=sys.stderr)
            await _preload(checkout, args.data, dirs[name], args.memories)
        p50: dict[str, list[float]] = {name: [] for name in sides}
        async with (
            _serving(sides["baseline"], dirs["baseline"]) as baseline_url,
            _serving(sides["candidate"], dirs["candidate"]) as candidate_url,
        ):
            urls = {"baseline": baseline_url, "candidate": candidate_url}
            for number in range(args.rounds):
                order = ("baseline", "candidate") if number % 2 == 0 else ("candidate", "baseline")
                start = number * args.calls
                calls = [
                    ("recall", {"query": questions[i % len(questions)]})
                    if args.tool == "recall"
                    # The same new texts on both sides: each side stores each once.
                    else ("remember", {"content": texts.fresh(args.memories + i)})
                    for i in range(start, start + args.calls)
                ]
                for name in order:
                    load = await run_load(
                        urls[name],
                        TENANT,
                        calls,
                        concurrency=1,
                        warmup=[("recall", {"query": "warm"})],
                    )
                    p50[name].append(load.latency.p50_ms)
                print(
                    f"round {number + 1}: baseline {p50['baseline'][-1]:.2f} ms, "
                    f"candidate {p50['candidate'][-1]:.2f} ms",
                    file=sys.stderr,
                )
    medians = {name: statistics.median(values) for name, values in p50.items()}
    print(
        json.dumps(
            {
                "tool": args.tool,
                "memories": args.memories,
                "rounds": args.rounds,
                "calls_per_round": args.calls,
                "baseline": str(sides["baseline"]),
                "candidate": str(sides["candidate"]),
                "baseline_p50_ms": [round(v, 2) for v in p50["baseline"]],
                "candidate_p50_ms": [round(v, 2) for v in p50["candidate"]],
                "baseline_p50_median_ms": round(medians["baseline"], 2),
                "candidate_p50_median_ms": round(medians["candidate"], 2),
                "ratio": round(medians["candidate"] / medians["baseline"], 3),
                # Each round's two sides ran back to back under the same load: the median of
                # their ratios is the paired figure, steadier than a ratio of medians.
                "round_ratio_median": round(
                    statistics.median(
                        c / b for b, c in zip(p50["baseline"], p50["candidate"], strict=True)
                    ),
                    3,
                ),
            },
            indent=2,
        )
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="folder of the data sets")
    parser.add_argument("--baseline", type=Path, required=True, help="the older checkout")
    parser.add_argument("--candidate", type=Path, required=True, help="the newer checkout")
    parser.add_argument("--memories", type=int, default=10_000, help="memories in the tenant")
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds")
    parser.add_argument("--calls", type=int, default=200, help="calls per round and side")
    parser.add_argument("--tool", choices=("recall", "remember"), default="recall")
    return parser


if __name__ == "__main__":
    exit_on_sigterm()
    asyncio.run(main(_parser().parse_args()))
