"""Recall p50 over MCP Streamable HTTP, ours against doobidoo's mcp-memory-service, on the
same turns and the same questions, in alternating rounds on the same machine.

    python bench/peer_http.py --data /work/shared/bench-data \\
        [--peer tests/thirdparty/mcp-memory-service] [--rounds 5] [--beam-chat 1[,2,...]]
        [--limit 5] [--baseline OTHER_CHECKOUT]

Two sets: LoCoMo conversations 0 and 1 (their turns in one tenant, stored as "speaker: text";
their category 1-4 questions asked) and long technical chats of BEAM 500K dev (each chat's
messages stored as "role: content" in a tenant of its own, cut to our content limit; its
questions asked). A chat has nineteen questions or so, few for a median: given several chats,
their first asks are also pooled, each side's p50 over all of them. Each server is
filled through its own tool over MCP (our ``remember``, the peer's ``memory_store`` with a
``conversation_id`` so its semantic de-duplication keeps every turn). Both return the same
number of memories (``--limit``, our balanced default). Two figures per side:

- first ask: every question asked once, of one side then the other (who goes first alternating
  by question), so no answer comes from a cache of the question;
- repeat: then every question again per round, ``--rounds`` rounds, who goes first alternating
  by round. The peer keeps the vectors of the last 1,024 texts it embedded and ours those of
  the last 512 questions, so both sides' repeats skip the model. The ratio is the median of the
  rounds' p50 ratios (ours over the peer's), which keeps the machine's drift between rounds off
  it.

The peer runs as ``memory server --streamable-http`` (its stateless Streamable HTTP transport,
uvicorn, on loopback with no key) on the sqlite_vec backend, embedding with our MiniLM int8
weights through its ONNX path (``bench._first_answer._peer``). Without its venv (and
onnxruntime in it) the peer is skipped and only our p50s are printed. ``--baseline`` serves
another checkout too (its own ``.venv/bin/mcp-memory-api``, run from its directory), filled and
asked the same way: a before and after measured against the peer in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._beam import fitted
from bench._client import Call, call_text, run_load, session
from bench._data import load_beam, load_locomo
from bench._first_answer import PEER_VENV, _peer
from bench._server import ApiServer, exit_on_sigterm, free_port, tied_to_runner

LOAD_CONCURRENCY: Final = 2
PEER_BOOT_S: Final = 180.0


@dataclass(frozen=True)
class QuerySet:
    name: str
    texts: list[str]
    questions: list[str]


def locomo_set(data: Path) -> QuerySet:
    conversations = load_locomo(data)[:2]
    return QuerySet(
        name="locomo conv 0-1",
        texts=[t.content for c in conversations for t in c.turns],
        questions=[q.text for c in conversations for q in c.questions],
    )


def beam_set(data: Path, chat: int) -> QuerySet:
    found = next(c for c in load_beam(data) if c.chat == chat)
    return QuerySet(
        name=f"beam chat {chat} ({found.title})",
        # A chat may say the same thing twice; ours keeps one copy, the peer refuses the second.
        texts=list(dict.fromkeys(fitted(m.stored) for m in found.messages)),
        questions=[q.text for q in found.questions],
    )


class PeerServer:
    """``memory server --streamable-http`` with a HOME of its own, on a free loopback port."""

    def __init__(self, process: asyncio.subprocess.Process, port: int) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}/mcp"
        self._health = f"http://127.0.0.1:{port}/health"

    @classmethod
    async def start(cls, venv: Path, home: Path) -> PeerServer | None:
        spec = _peer(home, venv)
        if spec is None:
            return None
        port = free_port()
        env = {**spec.env, "MCP_SSE_HOST": "127.0.0.1", "MCP_SSE_PORT": str(port)}
        process = await asyncio.create_subprocess_exec(
            *spec.command,
            "--streamable-http",
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            **tied_to_runner(),
        )
        server = cls(process, port)
        try:
            await server._wait_healthy()
        except BaseException:
            await server.stop()
            raise
        return server

    async def _wait_healthy(self) -> None:
        deadline = time.perf_counter() + PEER_BOOT_S
        async with httpx2.AsyncClient(timeout=2.0) as http:
            while time.perf_counter() < deadline and self.process.returncode is None:
                with contextlib.suppress(httpx2.HTTPError):
                    if (await http.get(self._health)).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise RuntimeError("the peer's Streamable HTTP server did not become healthy")

    async def stop(self) -> None:
        if self.process.returncode is None:
            # It leads its own session (``tied_to_runner``): its group is its pid.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 30)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.process.wait()


@dataclass(frozen=True)
class Side:
    """One server as the rounds see it: where it is, and how it is asked."""

    name: str
    url: str
    tenant: str
    recall: str
    limit: int

    def calls(self, questions: Sequence[str]) -> list[Call]:
        return [(self.recall, {"query": q, "limit": self.limit}) for q in questions]


async def fill(url: str, tenant: str, tool: str, arguments: Sequence[dict[str, Any]]) -> None:
    """Store every text through ``tool``, ``LOAD_CONCURRENCY`` clients at a time."""
    pending = iter(arguments)

    async def worker() -> None:
        async with session(url, tenant) as client:
            for item in pending:
                await call_text(client, tool, item)

    await asyncio.gather(*(worker() for _ in range(LOAD_CONCURRENCY)))


async def first_asks(sides: Sequence[Side], questions: list[str]) -> dict[str, list[float]]:
    """Each question asked once of each side, one after the other, who goes first alternating
    by question: every answer is a first one (no cache has seen the question)."""
    seconds: dict[str, list[float]] = {side.name: [] for side in sides}
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(session(s.url, s.tenant)) for s in sides]
        paired = list(zip(sides, clients, strict=True))
        for number, question in enumerate(questions):
            for side, client in paired if number % 2 == 0 else reversed(paired):
                tool, arguments = side.calls([question])[0]
                started = time.perf_counter()
                await call_text(client, tool, arguments)
                seconds[side.name].append(time.perf_counter() - started)
    return seconds


async def repeats(
    sides: Sequence[Side], questions: list[str], count: int
) -> dict[str, list[float]]:
    """Every question once per side per round, who goes first alternating by round: each
    round's p50."""
    round_p50: dict[str, list[float]] = {side.name: [] for side in sides}
    for number in range(count):
        for side in sides if number % 2 == 0 else list(reversed(sides)):
            result = await run_load(side.url, side.tenant, side.calls(questions), concurrency=1)
            round_p50[side.name].append(result.latency.p50_ms)
    return round_p50


def _compared(sides: Collection[str]) -> list[tuple[str, str]]:
    """The ratios printed, as (numerator, denominator): each of ours over the peer, and ours
    over the baseline."""
    pairs = [(side, "peer") for side in sides if side != "peer" and "peer" in sides]
    if "baseline" in sides:
        pairs.append(("ours", "baseline"))
    return pairs


def _summary(first: dict[str, list[float]], again: dict[str, list[float]]) -> dict[str, Any]:
    """Each side's p50s, and each of ours over the peer's (and over the baseline's, given one)."""
    summary: dict[str, Any] = {
        name: {
            "first_ask_p50_ms": round(statistics.median(first[name]) * 1000, 2),
            "repeat_p50_ms": round(statistics.median(again[name]), 2),
            "repeat_rounds_p50_ms": again[name],
        }
        for name in first
    }
    for mine, theirs in _compared(first):
        summary[f"{mine}/{theirs}"] = {
            "first_ask": round(
                statistics.median(first[mine]) / statistics.median(first[theirs]), 3
            ),
            "repeat": round(
                statistics.median(a / b for a, b in zip(again[mine], again[theirs], strict=True)),
                3,
            ),
        }
    return summary


@contextlib.asynccontextmanager
async def peer_running(venv: Path, home: Path) -> AsyncIterator[PeerServer | None]:
    peer = await PeerServer.start(venv, home)
    try:
        yield peer
    finally:
        if peer is not None:
            await peer.stop()


async def measure(
    ours: dict[str, ApiServer], query_set: QuerySet, args: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """The set's figures, and each side's first asks (seconds) for pooling across sets."""
    tenant = "peer-http-" + "-".join(query_set.name.split()[:3])
    sides = [Side(name, server.url, tenant, "recall", args.limit) for name, server in ours.items()]
    for side in sides:
        await fill(side.url, tenant, "remember", [{"content": t} for t in query_set.texts])
    with tempfile.TemporaryDirectory(prefix="peer-home-") as home:
        async with peer_running(args.peer, Path(home)) as peer:
            if peer is not None:
                stored = [{"content": t, "conversation_id": tenant} for t in query_set.texts]
                await fill(peer.url, tenant, "memory_store", stored)
                sides.append(Side("peer", peer.url, tenant, "memory_search", args.limit))
            first = await first_asks(sides, query_set.questions)
            again = await repeats(sides, query_set.questions, args.rounds)
    result = _summary(first, again)
    figures = {
        "set": query_set.name,
        "memories": len(query_set.texts),
        "questions": len(query_set.questions),
        **result,
    }
    return figures, first


def pooled_first_asks(name: str, firsts: Sequence[dict[str, list[float]]]) -> dict[str, Any]:
    """Each side's first-ask p50 over the questions of every set in ``firsts``, and ours over
    the peer's (and over the baseline's) on those p50s."""
    pooled = {side: [s for first in firsts for s in first[side]] for side in firsts[0]}
    p50 = {side: statistics.median(seconds) for side, seconds in pooled.items()}
    summary: dict[str, Any] = {
        "set": name,
        "questions": len(next(iter(pooled.values()))),
        **{side: {"first_ask_p50_ms": round(value * 1000, 2)} for side, value in p50.items()},
    }
    for mine, theirs in _compared(p50):
        summary[f"{mine}/{theirs}"] = {"first_ask": round(p50[mine] / p50[theirs], 3)}
    return summary


async def main(args: argparse.Namespace) -> None:
    chats = [beam_set(args.data, chat) for chat in args.beam_chat]
    with tempfile.TemporaryDirectory(prefix="peer-http-ours-") as work:
        ours = {"ours": await ApiServer.start(Path(work) / "ours")}
        try:
            if args.baseline is not None:
                ours["baseline"] = await ApiServer.start(
                    Path(work) / "baseline", checkout=args.baseline
                )
            figures, _ = await measure(ours, locomo_set(args.data), args)
            print(json.dumps(figures), flush=True)
            firsts = []
            for query_set in chats:
                figures, first = await measure(ours, query_set, args)
                firsts.append(first)
                print(json.dumps(figures), flush=True)
            if len(chats) > 1:
                name = "beam chats " + ",".join(map(str, args.beam_chat)) + " pooled"
                print(json.dumps(pooled_first_asks(name, firsts)), flush=True)
        finally:
            for server in ours.values():
                await server.stop()


def _chat_numbers(value: str) -> list[int]:
    try:
        chats = [int(part) for part in value.split(",")]
    except ValueError as error:
        message = f"chat numbers separated by commas, not {value!r}"
        raise argparse.ArgumentTypeError(message) from error
    if len(set(chats)) != len(chats):
        raise argparse.ArgumentTypeError(f"each chat once, not {value!r}")
    return chats


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/work/shared/bench-data"))
    parser.add_argument("--peer", type=Path, default=PEER_VENV, help="the peer's venv")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--beam-chat",
        type=_chat_numbers,
        default=[1],
        help="BEAM 500K dev chats, comma-separated (each its own tenant)",
    )
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another checkout (with its .venv) beside ours"
    )
    parser.add_argument("--limit", type=int, default=5, help="memories each recall returns")
    return parser.parse_args(argv)


if __name__ == "__main__":
    exit_on_sigterm()
    asyncio.run(main(parse()))
