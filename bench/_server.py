"""The API as a real process: ``mcp-memory-api --local --data-dir DIR --port P``.

Started on a free port chosen beforehand so that /health can be polled from the moment the
process is spawned: cold start is spawn to the first 200. Its JSON log lines are drained as they
arrive (every tool call writes one, so the pipe must never fill) and the boot ones are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import time
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
    async def start(cls, data_dir: Path) -> ApiServer:
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            *api_command(),
            "--local",
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
            env=server_env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
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

    async def stop(self) -> int | None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                self.process.kill()
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


__all__ = ["ApiServer", "BootTiming", "ProcessCpu", "postgres_cpu_s"]
