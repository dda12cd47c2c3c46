"""The real process, as a person and as a machine see it: on a terminal (stderr a pseudo-terminal)
a banner with the URLs it actually holds, and text lines; into a pipe JSON lines exactly as
before; and ``GET /`` on the MCP port pointing at ``/mcp`` and the memory page."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from services.api.main import SHUTDOWN_GRACE_S
from tests.api._process import BOOT_TIMEOUT_S, CONSOLE_SCRIPT, REPO, clean_env, keyed_local_api
from tests.api._process import start as start_piped

TEST_RUNTIME = [sys.executable, "-m", "tests.api._serve_test_runtime", "serve", "--port", "0"]
NO_STORAGE = {"DATABASE_URL": "postgresql://unused/none"}
READY = "is ready."
LAST_LINE = "LOG_FORMAT=json logs JSON lines instead."


@dataclass
class Terminal:
    """A process whose stderr is a pseudo-terminal (what a person's shell gives it)."""

    process: subprocess.Popen[bytes]
    master: int
    seen: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.seen).replace("\r\n", "\n")

    def read_until(self, marker: str, *, timeout_s: float = BOOT_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout_s
        while marker not in self.text() and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the process closed the terminal (it exited)
                    break
                self.seen.append(chunk.decode(errors="replace"))
            elif self.process.poll() is not None:
                break
        assert marker in self.text(), f"no {marker!r} on the terminal; got:\n{self.text()}"
        return self.text()

    def drain(self) -> str:
        with contextlib.suppress(OSError):
            while select.select([self.master], [], [], 0.2)[0]:
                chunk = os.read(self.master, 65536)
                if not chunk:
                    break
                self.seen.append(chunk.decode(errors="replace"))
        return self.text()


@contextlib.contextmanager
def on_terminal(args: list[str], env: Mapping[str, str]) -> Iterator[Terminal]:
    """``args`` with stderr on a pseudo-terminal and stdout a pipe; killed if still running."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        args,
        env=dict(env),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
    )
    os.close(slave)
    try:
        yield Terminal(process, master)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stdout is not None
        process.stdout.close()
        os.close(master)


def stop_on_terminal(terminal: Terminal) -> tuple[int, str, bytes]:
    """SIGTERM; the exit code, everything the terminal showed, and stdout."""
    terminal.process.send_signal(signal.SIGTERM)
    code = terminal.process.wait(timeout=SHUTDOWN_GRACE_S)
    assert terminal.process.stdout is not None
    return code, terminal.drain(), terminal.process.stdout.read()


def banner_url(text: str, label: str) -> str:
    found = re.search(rf"^  {label}:\s+(http://\S+)", text, flags=re.MULTILINE)
    assert found is not None, f"no {label} line in:\n{text}"
    return found.group(1)


async def get(url: str, **headers: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return response.status, response.content_type, await response.text()


async def test_a_terminal_gets_the_banner_with_the_ports_the_local_server_holds(
    embedded_data_dir: Path,
) -> None:
    data_dir = embedded_data_dir / "data"
    args = [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(data_dir)]
    with on_terminal([*args, "--port", "0", "--ui-port", "0"], clean_env()) as terminal:
        text = await asyncio.to_thread(terminal.read_until, LAST_LINE)
        mcp, page = banner_url(text, "MCP endpoint"), banner_url(text, "memory page")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", mcp) and not mcp.endswith(":3000/mcp")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/ui", page)
        # The URLs are the listeners': the MCP port answers /health, the page answers /ui.
        assert (await get(mcp.replace("/mcp", "/health")))[0] == 200
        assert (await get(page))[0] == 200
        assert f"data dir:      {data_dir}" in text
        assert "send header:   X-Memory-Tenant: <your-project>" in text
        assert "only this machine can connect" in text
        code, text, stdout = await asyncio.to_thread(stop_on_terminal, terminal)
    assert code == 0
    assert stdout == b""  # nothing on stdout: every line went to the terminal
    # The start-up info lines are the banner now; after it, text lines, not JSON.
    for event in ("listening", "boot_objects_frozen", "allocator_tuned", "ui_listening"):
        assert event not in text
    assert re.search(r"^\d\d:\d\d:\d\d info shutdown_complete \(ms=\d+\)$", text, re.MULTILINE)
    assert "outside the cluster" not in text and "Traceback" not in text


async def test_log_format_json_keeps_a_terminal_on_json_lines() -> None:
    env = clean_env(**NO_STORAGE, LOG_FORMAT="json")
    with on_terminal(TEST_RUNTIME, env) as terminal:
        text = await asyncio.to_thread(terminal.read_until, '"event": "auth"')
        code, text, stdout = await asyncio.to_thread(stop_on_terminal, terminal)
    assert code == 0
    assert READY not in text
    # As in a pod: warnings on stderr (the terminal), info lines on stdout.
    assert [json.loads(line)["event"] for line in text.splitlines()] == ["auth"]
    assert "listening" in [json.loads(line)["event"] for line in stdout.decode().splitlines()]


async def test_a_pipe_gets_json_lines_only_and_log_format_text_forces_the_banner() -> None:
    piped = await start_piped(TEST_RUNTIME, clean_env(**NO_STORAGE))
    listening = await piped.wait_for("listening")
    auth = await piped.wait_for("auth")
    piped.process.send_signal(signal.SIGTERM)
    assert await piped.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    assert [event for event in piped.events if event["event"] == "raw"] == []
    assert "outside the cluster" in auth["detail"]  # not --local: a cluster's server

    forced = await start_piped(TEST_RUNTIME, clean_env(**NO_STORAGE, LOG_FORMAT="text"))
    await asyncio.sleep(0)
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while not any(LAST_LINE in event.get("line", "") for event in forced.events):
        assert time.monotonic() < deadline, forced.events
        await asyncio.sleep(0.05)
    forced.process.send_signal(signal.SIGTERM)
    assert await forced.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    lines = [str(event.get("line")) for event in forced.events]  # stripped by the reader
    assert any(line.startswith("mcp-memory ") and line.endswith(READY) for line in lines)
    assert any(
        re.fullmatch(r"MCP endpoint:  http://127\.0\.0\.1:\d+/mcp .*", line) for line in lines
    )
    assert listening["port"] > 0


async def test_get_root_points_at_mcp_and_the_page_without_tenant_or_key() -> None:
    async with keyed_local_api("s3cret") as (_api, mcp_url, page_base):
        base = mcp_url.removesuffix("/mcp")
        status, content_type, body = await get(f"{base}/", Accept="application/json")
        assert (status, content_type) == (200, "application/json")
        assert json.loads(body) == {
            "mcp": mcp_url,
            "transport": "streamable-http: POST JSON-RPC",
            "tenant_header": "X-Memory-Tenant",
            "page": f"{page_base}/ui",
        }
        status, content_type, body = await get(f"{base}/", Accept="text/html,*/*;q=0.8")
        assert (status, content_type) == (200, "text/html")
        assert f'<a href="{page_base}/ui">' in body and f"<code>{mcp_url}</code>" in body
        assert body.count("\n") == 1
        # What the gates did before is unchanged: the key on /mcp, /health for anyone.
        assert (await get(f"{base}/health"))[:2] == (200, "application/json")
        async with aiohttp.ClientSession() as http, http.post(f"{base}/", json={}) as response:
            assert response.status == 404
            assert await response.json() == {"error": "not found: MCP is served at POST /mcp"}
        async with aiohttp.ClientSession() as http, http.post(mcp_url, json={}) as response:
            assert response.status == 401
        # A Host that is not a plain name is not echoed into the page.
        status, _, body = await get(f"{base}/", Accept="text/html", Host="<b>x")
        assert status == 421  # the loopback Host gate answers first


async def test_get_root_with_a_foreign_host_gives_paths_alone() -> None:
    piped = await start_piped(TEST_RUNTIME, clean_env(**NO_STORAGE))
    try:
        port = (await piped.wait_for("listening"))["port"]
        url = f"http://127.0.0.1:{port}/"
        status, _, body = await get(url, Accept="text/html", Host="<script>x")
        assert status == 200
        assert "<script>" not in body and "<code>/mcp</code>" in body
        assert "does not serve the memory page" in body  # this runtime has none
        status, _, body = await get(url, Host=f"memory.lan:{port}")
        assert json.loads(body)["mcp"] == f"http://memory.lan:{port}/mcp"
        assert json.loads(body)["page"] is None
    finally:
        piped.process.send_signal(signal.SIGTERM)
        assert await piped.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
