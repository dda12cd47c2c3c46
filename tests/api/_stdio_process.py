"""A stdio server as a real process, spoken to in raw JSON-RPC: its answers and log lines are
kept with their arrival times."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from tests.api._process import CONSOLE_SCRIPT, clean_env

BOOT_TIMEOUT_S = 120.0
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "stdio-test", "version": "0"},
}


class StdioProcess:
    """A stdio server whose stdout answers and stderr log lines are kept with their arrival
    times (seconds since the process was started)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.started = time.monotonic()
        self.answers: dict[int, tuple[float, dict[str, Any]]] = {}
        self.logs: list[tuple[float, dict[str, Any]]] = []
        self.plain: list[str] = []
        self._arrived = asyncio.Condition()
        assert process.stdout is not None and process.stderr is not None
        self._readers = [
            asyncio.create_task(self._read(process.stdout, self._answer)),
            asyncio.create_task(self._read(process.stderr, self._log)),
        ]
        self._ids = 0

    async def _read(self, stream: asyncio.StreamReader, keep: Any) -> None:
        async for raw in stream:
            keep(time.monotonic() - self.started, raw.decode().strip())
            async with self._arrived:
                self._arrived.notify_all()

    def _answer(self, at: float, line: str) -> None:
        message = json.loads(line)  # stdout is the protocol's: anything else fails here
        self.answers[message["id"]] = (at, message)

    def _log(self, at: float, line: str) -> None:
        try:
            self.logs.append((at, json.loads(line)))
        except ValueError:
            self.plain.append(line)

    async def send(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        self._ids += 1
        await self._write({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        return self._ids

    async def notify(self, method: str) -> None:
        await self._write({"jsonrpc": "2.0", "method": method})

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        if message.get("params") is None:
            message.pop("params", None)
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def answer(self, request_id: int) -> tuple[float, dict[str, Any]]:
        async with self._arrived:
            await asyncio.wait_for(
                self._arrived.wait_for(lambda: request_id in self.answers), BOOT_TIMEOUT_S
            )
        return self.answers[request_id]

    def logged_at(self, event: str) -> float:
        return next(at for at, line in self.logs if line.get("event") == event)

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, str, bool]:
        at, message = await self.answer(
            await self.send("tools/call", {"name": tool, "arguments": arguments})
        )
        result = message["result"]
        return at, result["content"][0]["text"], result["isError"]

    async def handshake(self) -> None:
        await self.answer(await self.send("initialize", INITIALIZE))
        await self.notify("notifications/initialized")

    async def leave(self) -> int:
        """Close stdin, as a client leaving does; the exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = await asyncio.wait_for(self.process.wait(), BOOT_TIMEOUT_S)
        await asyncio.gather(*self._readers)
        return code


@contextlib.asynccontextmanager
async def stdio_server(args: list[str], **env: str) -> AsyncIterator[StdioProcess]:
    process = await asyncio.create_subprocess_exec(
        str(CONSOLE_SCRIPT),
        "--stdio",
        *args,
        env=clean_env(**env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    server = StdioProcess(process)
    try:
        yield server
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
