"""Start the API as a real process and read its JSON log lines as they arrive."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from tests.conftest import CLEARED_ENV_PREFIXES

REPO = Path(__file__).resolve().parents[2]
CONSOLE_SCRIPT = Path(sys.executable).parent / "mcp-memory-api"
BOOT_TIMEOUT_S = 30.0


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_ENV_PREFIXES)}
    env.pop("PORT", None)
    env.pop("HOST", None)
    return {**env, "PYTHONPATH": str(REPO), **extra}


class ApiProcess:
    """A started server process whose JSON log lines are collected as they arrive."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[dict[str, Any]] = []
        self._readers = [
            asyncio.create_task(self._read(stream))
            for stream in (process.stdout, process.stderr)
            if stream is not None
        ]

    async def _read(self, stream: asyncio.StreamReader) -> None:
        async for raw in stream:
            line = raw.decode().strip()
            try:
                self.events.append(json.loads(line))
            except ValueError:
                self.events.append({"event": "raw", "line": line})

    def names(self) -> list[str]:
        return [str(event.get("event")) for event in self.events]

    async def wait_for(self, name: str, *, timeout_s: float = BOOT_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("event") == name:
                    return event
            if self.process.returncode is not None:
                break
            await asyncio.sleep(0.02)
        raise AssertionError(f"no {name!r} line; got {self.names()}")

    async def exit_code(self, *, timeout_s: float) -> int:
        code = await asyncio.wait_for(self.process.wait(), timeout_s)
        await asyncio.gather(*self._readers)
        return code


async def start(args: list[str], env: Mapping[str, str], *, stdin: bool = False) -> ApiProcess:
    """``stdin``: give the process a pipe it may keep open (a stdio server reads it)."""
    process = await asyncio.create_subprocess_exec(
        *args,
        env=dict(env),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE if stdin else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    return ApiProcess(process)


async def stop(api: ApiProcess) -> None:
    """Kill the process if a test left it running."""
    if api.process.returncode is None:
        api.process.kill()
        await api.process.wait()


@contextlib.asynccontextmanager
async def keyed_local_api(key: str, **env: str) -> AsyncIterator[tuple[ApiProcess, str, str]]:
    """A ``--local`` server with ``MCP_API_KEY`` set (see :func:`local_api`)."""
    async with local_api(MCP_API_KEY=key, **env) as started:
        yield started


@contextlib.asynccontextmanager
async def local_api(**env: str) -> AsyncIterator[tuple[ApiProcess, str, str]]:
    """A ``--local`` server on a fresh embedded data dir with ``env`` set: the process, its MCP
    URL and its page's base URL. It must stop cleanly on SIGTERM when the test is done."""
    from services.api.main import SHUTDOWN_GRACE_S
    from tests.conftest import _embedded_data_dir

    with _embedded_data_dir() as data_dir:
        args = [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(data_dir)]
        api = await start([*args, "--port", "0", "--ui-port", "0"], clean_env(**env))
        try:
            listening = await api.wait_for("listening")
            ui = await api.wait_for("ui_listening")
            yield api, f"http://127.0.0.1:{listening['port']}/mcp", ui["url"].removesuffix("/ui")
            api.process.send_signal(signal.SIGTERM)
            assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
        finally:
            await stop(api)


async def remember_over_http(port: int | str, content: str, *, tenant: str) -> dict[str, Any]:
    """One ``remember`` sent as a bare JSON-RPC request to ``POST /mcp``, as the README's curl
    line sends it; the JSON-RPC result."""
    import aiohttp

    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"content": content}},
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"http://127.0.0.1:{port}/mcp", json=request, headers={"X-Memory-Tenant": tenant}
        ) as answer,
    ):
        result: dict[str, Any] = (await answer.json())["result"]
    return result
