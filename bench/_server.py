"""The API as a real process: ``mcp-memory-api --local --data-dir DIR --port P``.

Started on a free port chosen beforehand so that /health can be polled from the moment the
process is spawned: cold start is spawn to the first 200. Its JSON log lines are drained as they
arrive (every tool call writes one, so the pipe must never fill) and the boot ones are kept.

A server must not outlive the runner that started it: one left behind by a killed or timed-out
run kept serving (and its embedded PostgreSQL kept running) for hours. So each child is started
by ``tied_to_runner``: in a session of its own, which ``stop`` signals as a whole, and on Linux
with ``PR_SET_PDEATHSIG`` set to SIGKILL, so the kernel kills it when the runner dies in any way,
SIGKILL included, which no handler in the runner sees. The server's embedded PostgreSQL needs
nothing more: its keeper stops it when the server dies (``shared.storage.postgres.keeper``).
``exit_on_sigterm`` turns a SIGTERM to the runner into an exit, so its ``finally`` blocks stop
the servers gracefully and remove their temporary data dirs, which the kernel's kill would leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx2
import psutil
from prometheus_client.parser import text_string_to_metric_families

BOOT_TIMEOUT_S: Final = 180.0
STOP_TIMEOUT_S: Final = 30.0
# Configuration the runner's own environment must not leak into the server it measures.
_CONFIG_PREFIXES: Final = (
    "DATABASE_URL",
    "VECTOR_",
    "STATE_BUCKET",
    "AWS_",
    "KNOWLEDGE_BASE_ID",
    "EMBEDDING_",
    "RECALL_",
    "PORT",
    "MCP_API_KEY",
    "STATS_",
    "METRICS_PORT",
    "COMPACTOR_",
)
_BOOT_EVENTS: Final = ("embedded_postgres_ready", "postgres_stores_open", "embedder_loaded")
# prctl(2)'s option: the signal a process gets when the thread that forked it exits.
_PR_SET_PDEATHSIG: Final = 1
# Loaded here, not in the forked child, which should do as little as it can before exec.
_LIBC: Final = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def api_command() -> list[str]:
    script = Path(sys.executable).parent / "mcp-memory-api"
    if script.exists():
        return [str(script)]
    found = shutil.which("mcp-memory-api")
    if found:
        return [found]
    return [sys.executable, "-c", "from services.api.main import main; main()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}


def _die_with(runner: int) -> Callable[[], None]:
    """The child's last step before exec: be killed when ``runner`` dies."""
    kill = int(signal.SIGKILL)

    # Runs in the forked child, where the runner's other threads (onnxruntime's, the executor's)
    # are gone but a lock they held stays held: so a ctypes call and two syscalls, no import.
    def tie() -> None:
        if _LIBC is not None and _LIBC.prctl(_PR_SET_PDEATHSIG, kill) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        # A runner that died before the prctl sent nothing: the child is an orphan already.
        if os.getppid() != runner:
            os._exit(1)

    return tie


def tied_to_runner() -> dict[str, Any]:
    """``create_subprocess_exec`` keywords for a child that must not outlive this process.

    The kernel sends the death signal when the forking *thread* exits: the child must be spawned
    from the thread that lives as long as the runner (the event loop's, which ``asyncio.run``
    runs in the main thread), never from ``asyncio.to_thread``. SIGKILL, not SIGTERM, because a
    runner that died cannot wait for a graceful stop, and the keeper stops PostgreSQL regardless.
    Its own session: a Ctrl-C in the runner's terminal reaches the runner alone, which then stops
    its servers itself, in order.
    """
    preexec = _die_with(os.getpid()) if _LIBC is not None else None
    return {"start_new_session": True, "preexec_fn": preexec}


def exit_on_sigterm() -> None:
    """Make SIGTERM to this process an exit (code 143, as if killed by it) that runs the
    ``finally`` blocks: they stop the servers gracefully and remove their data dirs.

    Called in the main thread before ``asyncio.run``. The exception is raised wherever the main
    thread is: in a coroutine it unwinds through that coroutine's ``finally`` blocks, and
    ``asyncio.run`` then cancels the other tasks, which runs theirs. A second SIGTERM during
    that cleanup cuts it short; the servers' death signal still ends them."""

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)


@dataclass
class BootTiming:
    """Spawn to /health 200, and what the boot lines say its parts took."""

    health_s: float
    listening_s: float | None
    parts_ms: dict[str, int] = field(default_factory=dict)


@dataclass
class ProcessCpu:
    """CPU seconds (user + system) of the API process and of the PostgreSQL server tree."""

    api_s: float
    postgres_s: float


class ApiServer:
    """One running ``mcp-memory-api`` process."""

    def __init__(self, process: asyncio.subprocess.Process, *, port: int, data_dir: Path) -> None:
        self.process = process
        self.port = port
        self.data_dir = data_dir
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.base = f"http://127.0.0.1:{port}"
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.tool_lines = 0
        self.stderr_lines: list[str] = []
        self._spawned = time.perf_counter()
        self._readers = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]
        self.boot: BootTiming | None = None

    @classmethod
    async def start(cls, data_dir: Path, *, checkout: Path | None = None) -> ApiServer:
        """This tree's API on ``data_dir``; or, given ``checkout``, that checkout's (its own
        ``.venv``, run from its directory), for a before and after in one run."""
        port = free_port()
        command = (
            [str(checkout / ".venv" / "bin" / "mcp-memory-api")] if checkout else api_command()
        )
        process = await asyncio.create_subprocess_exec(
            *command,
            "--local",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
            cwd=checkout,
            env=server_env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            **tied_to_runner(),
        )
        server = cls(process, port=port, data_dir=data_dir)
        try:
            await server._wait_healthy()
        except BaseException:
            await server.stop()
            raise
        return server

    async def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if event.get("event") == "tool_call":
                self.tool_lines += 1
            else:
                self.events.append((time.perf_counter() - self._spawned, event))

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        async for raw in self.process.stderr:
            self.stderr_lines.append(raw.decode(errors="replace").rstrip())
            del self.stderr_lines[:-200]

    async def _wait_healthy(self) -> None:
        deadline = self._spawned + BOOT_TIMEOUT_S
        async with httpx2.AsyncClient(timeout=2.0) as http:
            while time.perf_counter() < deadline:
                if self.process.returncode is not None:
                    break
                with contextlib.suppress(httpx2.HTTPError):
                    response = await http.get(f"{self.base}/health")
                    if response.status_code == 200:
                        self.boot = self._boot_timing(time.perf_counter() - self._spawned)
                        return
                await asyncio.sleep(0.01)
        tail = "\n".join(self.stderr_lines[-20:])
        raise RuntimeError(f"mcp-memory-api on {self.data_dir} did not become healthy:\n{tail}")

    def _boot_timing(self, health_s: float) -> BootTiming:
        parts: dict[str, int] = {}
        listening: float | None = None
        for at, event in self.events:
            name = str(event.get("event"))
            if name in _BOOT_EVENTS:
                parts[name] = int(event.get("ms", event.get("load_ms", 0)))
            if name == "listening":
                listening = at
        return BootTiming(health_s=health_s, listening_s=listening, parts_ms=parts)

    def peak_rss_bytes(self) -> int:
        """VmHWM of the API process: its peak resident set so far."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM in /proc status")

    def rss_bytes(self) -> int:
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def cpu(self) -> ProcessCpu:
        api = psutil.Process(self.process.pid).cpu_times()
        return ProcessCpu(api_s=api.user + api.system, postgres_s=postgres_cpu_s(self.data_dir))

    async def metrics(self) -> dict[str, float]:
        """Every sample of GET /metrics, keyed ``name{label=value,...}``."""
        async with httpx2.AsyncClient(timeout=10.0) as http:
            response = await http.get(f"{self.base}/metrics")
        response.raise_for_status()
        samples: dict[str, float] = {}
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                samples[f"{sample.name}{{{labels}}}"] = float(sample.value)
        return samples

    def _signal_group(self, signum: int) -> None:
        # The server leads its own session (``tied_to_runner``): its group is its pid.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    async def stop(self) -> int | None:
        if self.process.returncode is None:
            self._signal_group(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                self._signal_group(signal.SIGKILL)
                await self.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._readers), 5)
        return self.process.returncode


def postgres_cpu_s(data_dir: Path) -> float:
    """CPU seconds of the embedded server serving ``data_dir``: postmaster plus its children."""
    pgdata = str((data_dir / "postgres").resolve())
    total = 0.0
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            cmdline = proc.info["cmdline"] or []
            if proc.info["name"] != "postgres" or pgdata not in " ".join(cmdline):
                continue
            for member in (proc, *proc.children(recursive=True)):
                times = member.cpu_times()
                total += times.user + times.system
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


__all__ = [
    "ApiServer",
    "BootTiming",
    "ProcessCpu",
    "exit_on_sigterm",
    "free_port",
    "postgres_cpu_s",
    "server_env",
    "tied_to_runner",
]
