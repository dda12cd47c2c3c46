"""What one recall costs, step by step, and how that cost grows with common words.

    python bench/recall_cost.py split --data /work/shared/bench-data [--memories 10000]
        [--queries 200] [--http-calls 300] [--data-dir DIR] [--profile N] [--common | --beam N]
    python bench/recall_cost.py common [--facts 2000] [--rounds 6] [--calls 100] [--locomo]

``split``: LoCoMo turns preloaded into one tenant (``--data-dir`` keeps them for the next run),
recall's steps timed one by one in this process (``bench._steps``: each step alone, recall and
the tool whole, the server's MCP framing of the answer), then recall over HTTP at concurrency 1
through the official client against ``mcp-memory-api --local`` on the same data dir. ``--profile
N`` prints cProfile's N costliest functions (by own time) over the in-process recalls.

``split --common`` preloads the synthetic facts of ``common`` instead, and asks its queries;
``split --beam N`` BEAM 500K dev chat N's messages (all of them, at most ``--memories``), and
asks its questions in turn.

``common``: a tenant of short synthetic facts drawn from a small vocabulary (each fact eight of
its forty words, so every query word is held by hundreds of memories) against an empty tenant,
recall over HTTP in alternating rounds; the ratio is the median of the rounds' p50 ratios. Each
round's mean server time per recall (the tool's duration histogram) and the client's CPU per
recall are printed beside it.
``common --locomo``: the same with LoCoMo's first turns and its questions in place of the
facts, to tell what common words cost from what any tenant with memories costs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import random
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._client import Call, run_load
from bench._data import MemoryTexts, load_beam, load_locomo
from bench._inproc import Local, open_local, preload
from bench._server import ApiServer, exit_on_sigterm
from bench._speed import _histogram_mean_ms, _ms
from bench._steps import UNAVOIDABLE, WHOLES, StepTimes, recall_steps

TENANT: Final = "recall-cost"
COMMON: Final = "common-words"
EMPTY: Final = "empty-tenant"
VOCABULARY: Final = (
    "deploy server cache build test api database config release branch script client token "
    "queue worker service report index schema module backup log metric alert user session "
    "page form route handler job task file folder image storage network proxy review team"
).split()
FACT_WORDS: Final = 8
QUERY_WORDS: Final = 4
WARM_UP: Final = 20


def _facts(count: int, seed: int = 41) -> list[str]:
    draw = random.Random(seed)
    return [" ".join(draw.sample(VOCABULARY, FACT_WORDS)) for _ in range(count)]


def _queries(count: int, seed: int = 42) -> list[str]:
    draw = random.Random(seed)
    return [" ".join(draw.sample(VOCABULARY, QUERY_WORDS)) + "?" for _ in range(count)]


def _held(data_dir: Path) -> int:
    """Memories an earlier run preloaded into ``data_dir``'s tenant (noted beside the dir)."""
    note = data_dir.with_name(data_dir.name + ".preloaded")
    return int(note.read_text()) if note.exists() else 0


def _note_held(data_dir: Path, count: int) -> None:
    data_dir.with_name(data_dir.name + ".preloaded").write_text(str(count))


def _table(steps: StepTimes) -> dict[str, Any]:
    rows = {name: _ms(getattr(steps, name)) for name in steps.names()}
    parts = [n for n in steps.names() if n not in WHOLES and n != "counters_cold"]
    return {
        "steps": rows,
        # The counters' cold read happens once a minute per tenant: not a part of each recall.
        "sum_of_steps_mean_ms": round(sum(rows[n]["mean_ms"] for n in parts), 3),
        "sum_of_unavoidable_mean_ms": round(sum(rows[n]["mean_ms"] for n in UNAVOIDABLE), 3),
    }


async def _split(args: argparse.Namespace) -> dict[str, Any]:
    if args.common:
        facts = _facts(args.memories)
        questions = _queries(args.queries + WARM_UP)
        text_of: Callable[[int], str] = facts.__getitem__
    elif args.beam is not None:
        chat = next(c for c in load_beam(args.data) if c.chat == args.beam)
        messages = [fitted(m.stored) for m in chat.messages]
        # A chat's questions are few: asked over and over, as many times as were asked for.
        asked = [q.text for q in chat.questions]
        questions = [asked[i % len(asked)] for i in range(args.queries + WARM_UP)]
        text_of = messages.__getitem__
        args.memories = min(args.memories, len(messages))
    else:
        conversations = load_locomo(args.data)
        questions = [q.text for c in conversations for q in c.questions]
        text_of = MemoryTexts(conversations).stored
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="recall-cost-"))
    async with open_local(data_dir) as local:
        held = _held(data_dir)
        if args.memories > held:
            print(f"preloading {args.memories - held} memories", file=sys.stderr)
            await preload(local, TENANT, text_of, range(held, args.memories), cache={})
            _note_held(data_dir, args.memories)
        await recall_steps(local, TENANT, questions[-WARM_UP:])
        steps = await recall_steps(local, TENANT, questions[: args.queries])
        result: dict[str, Any] = {"memories": args.memories, "queries": args.queries}
        result["in_process"] = _table(steps)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            await _recalls(local, questions[: args.queries])
            profile.disable()
            out = io.StringIO()
            stats = pstats.Stats(profile, stream=out)
            stats.sort_stats(args.sort).print_stats(args.profile)
            print(out.getvalue(), file=sys.stderr)
        server = await ApiServer.start(data_dir)
        try:
            calls: list[Call] = [("recall", {"query": q}) for q in questions[: args.http_calls]]
            warm: list[Call] = [("recall", {"query": q}) for q in questions[-WARM_UP:]]
            await run_load(server.url, TENANT, warm, concurrency=1)
            load = await run_load(server.url, TENANT, calls, concurrency=1)
            result["http_c1"] = asdict(load.latency)
        finally:
            await server.stop()
    return result


async def _recalls(local: Local, queries: Sequence[str]) -> None:
    from shared.operations.recall import recall

    for query in queries:
        await recall(local.ops, TENANT, None, query=query, mode="balanced", limit=5)


async def _common(args: argparse.Namespace) -> dict[str, Any]:
    # Each tenant its own questions: the server keeps the vectors of the questions asked last,
    # and a question the other tenant was just asked would skip its embedding.
    asked = {
        tenant: _queries(args.rounds * args.calls + WARM_UP, seed=seed)
        for tenant, seed in ((COMMON, 42), (EMPTY, 43))
    }
    text_of: Callable[[int], str] = _facts(args.facts).__getitem__
    if args.locomo:
        conversations = load_locomo(args.data)
        text_of = MemoryTexts(conversations).stored
        questions = [q.text for c in conversations for q in c.questions]
        asked[COMMON] = questions[: args.rounds * args.calls + WARM_UP]
    with tempfile.TemporaryDirectory(prefix="recall-common-") as scratch:
        data_dir = Path(scratch)
        async with open_local(data_dir) as local:
            await preload(local, COMMON, text_of, range(args.facts), cache={})
        server = await ApiServer.start(data_dir)
        p50: dict[str, list[float]] = {COMMON: [], EMPTY: []}
        tool_ms: dict[str, list[float]] = {COMMON: [], EMPTY: []}
        client_ms: dict[str, list[float]] = {COMMON: [], EMPTY: []}
        try:
            warm = {
                tenant: [("recall", {"query": q}) for q in queries[:WARM_UP]]
                for tenant, queries in asked.items()
            }
            for tenant in p50:
                await run_load(server.url, tenant, warm[tenant] * 3, concurrency=1)
            for number in range(args.rounds):
                start = WARM_UP + number * args.calls
                order = [COMMON, EMPTY] if number % 2 == 0 else [EMPTY, COMMON]
                for tenant in order:
                    calls: list[Call] = [
                        ("recall", {"query": q}) for q in asked[tenant][start : start + args.calls]
                    ]
                    before = await server.metrics()
                    load = await run_load(
                        server.url, tenant, calls, concurrency=1, warmup=warm[tenant]
                    )
                    after = await server.metrics()
                    p50[tenant].append(load.latency.p50_ms)
                    tool_ms[tenant].append(_tool_mean_ms(before, after))
                    client_ms[tenant].append(round(1000 * load.client_cpu_s / len(calls), 3))
        finally:
            await server.stop()
    ratios = [c / e for c, e in zip(p50[COMMON], p50[EMPTY], strict=True)]
    return {
        "facts": args.facts,
        "texts": "LoCoMo turns" if args.locomo else f"{len(VOCABULARY)}-word vocabulary",
        "common_p50_ms": p50[COMMON],
        "empty_p50_ms": p50[EMPTY],
        "common_p50_median_ms": round(statistics.median(p50[COMMON]), 2),
        "empty_p50_median_ms": round(statistics.median(p50[EMPTY]), 2),
        "round_ratio_median": round(statistics.median(ratios), 3),
        # Where a round's time goes, per recall: the server's own (its tool duration histogram,
        # the round's one warm-up call included) and the official client's CPU (``run_load``'s);
        # what HTTP and the server's framing add is the rest.
        "common_tool_mean_ms": tool_ms[COMMON],
        "empty_tool_mean_ms": tool_ms[EMPTY],
        "common_client_cpu_ms": client_ms[COMMON],
        "empty_client_cpu_ms": client_ms[EMPTY],
    }


def _tool_mean_ms(before: dict[str, float], after: dict[str, float]) -> float:
    mean = _histogram_mean_ms(before, after, "mcp_memory_tool_duration_seconds", "tool=recall")
    if mean is None:
        raise RuntimeError("the server observed no recall in a measured round")
    return mean


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    split = sub.add_parser("split", help="recall's steps one by one, and over HTTP")
    split.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    split.add_argument("--memories", type=int, default=10_000)
    split.add_argument("--queries", type=int, default=200)
    split.add_argument("--http-calls", type=int, default=300)
    split.add_argument("--data-dir", type=Path, default=None, help="kept for the next run")
    split.add_argument(
        "--common", action="store_true", help="the synthetic facts of `common` instead of LoCoMo"
    )
    split.add_argument(
        "--beam", type=int, default=None, help="a BEAM chat's messages and questions instead"
    )
    split.add_argument("--profile", type=int, default=0, help="print the N costliest functions")
    split.add_argument("--sort", default="tottime", help="cProfile's order: tottime, cumtime")
    common = sub.add_parser("common", help="common words against an empty tenant")
    common.add_argument("--facts", type=int, default=2_000)
    common.add_argument("--rounds", type=int, default=6)
    common.add_argument("--calls", type=int, default=100)
    common.add_argument(
        "--locomo", action="store_true", help="LoCoMo turns and questions instead of the facts"
    )
    common.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    return parser


def _markdown(result: dict[str, Any]) -> str:
    """The split as the table docs/benchmarks.md shows."""
    lines = ["| step | mean ms | p50 ms | p95 ms |", "|---|---|---|---|"]
    table = result["in_process"]
    for name, row in table["steps"].items():
        lines.append(
            f"| {name} | {row['mean_ms']:.2f} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} |"
        )
    http = result["http_c1"]
    lines += [
        f"| sum of the steps (cold counters aside) | {table['sum_of_steps_mean_ms']:.2f} | | |",
        f"| sum of the unavoidable ones | {table['sum_of_unavoidable_mean_ms']:.2f} | | |",
        f"| recall over HTTP, c=1 | {http['mean_ms']:.2f} | {http['p50_ms']:.2f} | "
        f"{http['p95_ms']:.2f} |",
    ]
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    result = await (_split(args) if args.command == "split" else _common(args))
    print(json.dumps(result))
    if args.command == "split":
        print(_markdown(result))


if __name__ == "__main__":
    exit_on_sigterm()
    asyncio.run(main(_parser().parse_args()))
