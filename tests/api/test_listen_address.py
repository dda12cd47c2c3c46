"""Where the real process listens, read from its own sockets, and the Host gate of a loopback bind.

``--local`` is a laptop's server with no key: it must listen on loopback only, or anyone on the
same network reads and writes its memories. ``HOST`` or ``--host`` choose otherwise; without
``--local`` the default stays every interface (pods need it). On a loopback bind a request whose
``Host`` is not a loopback name is refused (DNS rebinding: a page on evil.example whose name
resolves to 127.0.0.1 reaches the port, but its requests still say ``Host: evil.example``).
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import psutil
import pytest

from services.api.main import SHUTDOWN_GRACE_S
from shared.process.listen import url_host
from tests.api._process import BOOT_TIMEOUT_S, CONSOLE_SCRIPT, ApiProcess, clean_env, start, stop
from tests.api.conftest import mcp_session

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
TEST_RUNTIME = [sys.executable, "-m", "tests.api._serve_test_runtime", "serve", "--port", "0"]


def listening_sockets(pid: int) -> set[tuple[str, int]]:
    """The (address, port) of every TCP socket the process itself listens on."""
    return {
        (connection.laddr.ip, connection.laddr.port)
        for connection in psutil.Process(pid).net_connections(kind="tcp")
        if connection.status == psutil.CONN_LISTEN
    }


@contextlib.asynccontextmanager
async def running(
    args: list[str], env: Mapping[str, str]
) -> AsyncIterator[tuple[ApiProcess, dict[str, Any]]]:
    """The process, once it has logged ``listening``; stopped with SIGTERM (exit 0) after."""
    api = await start(args, env)
    try:
        listening = await api.wait_for("listening")
        yield api, listening
        api.process.send_signal(signal.SIGTERM)
        assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    finally:
        await stop(api)


async def post_mcp(
    port: int, *, host: str, path: str = "/mcp", address: str = "127.0.0.1"
) -> tuple[int, dict[str, Any]]:
    """POST tools/list to address:port with this ``Host`` header; status and JSON body."""
    url = f"http://{url_host(address)}:{port}{path}"
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=LIST_TOOLS, headers={"Host": host}) as response,
    ):
        return response.status, await response.json()


def local_args(data_dir: Path, *extra: str) -> list[str]:
    return [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(data_dir), "--port", "0", *extra]


async def test_local_listens_on_loopback_only_says_so_and_refuses_a_foreign_host(
    embedded_data_dir: Path,
) -> None:
    async with running(local_args(embedded_data_dir), clean_env()) as (api, listening):
        port = listening["port"]
        sockets = listening_sockets(api.process.pid)
        # The API's port, and the memory page's beside it (UI_PORT): on loopback, both.
        assert ("127.0.0.1", port) in sockets
        assert {address for address, _ in sockets} == {"127.0.0.1"}
        assert listening["addresses"] == [f"127.0.0.1:{port}"]
        assert listening["endpoint"] == f"POST http://127.0.0.1:{port}/mcp"

        status, body = await post_mcp(port, host="evil.example")
        assert status == 421
        assert body["error"]["code"] == -32004
        message = body["error"]["message"]
        assert message.startswith("Host header 'evil.example' is not a loopback name")
        assert "localhost, 127.0.0.1 or [::1]" in message
        status, _ = await post_mcp(port, host=f"evil.example:{port}", path="/metrics")
        assert status == 421

        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost", f"[::1]:{port}"):
            status, body = await post_mcp(port, host=host)
            assert status == 200, host
            assert [tool["name"] for tool in body["result"]["tools"]][:2] == ["recall", "remember"]
        # The official client, by name: it sends Host: localhost:PORT.
        async with mcp_session(f"http://localhost:{port}/mcp") as client:
            assert (await client.list_tools()).tools
    assert "Traceback" not in json.dumps(api.events)


async def test_host_opens_local_to_the_network_and_drops_the_loopback_host_gate(
    embedded_data_dir: Path,
) -> None:
    env = clean_env(HOST="0.0.0.0")
    async with running(local_args(embedded_data_dir), env) as (api, listening):
        port = listening["port"]
        assert listening_sockets(api.process.pid) == {("0.0.0.0", port)}
        assert listening["addresses"] == [f"0.0.0.0:{port}"]
        assert listening["endpoint"] == f"POST http://<host>:{port}/mcp"
        # Reachable by any name now, as the operator chose: the Host gate guards loopback only.
        status, _ = await post_mcp(port, host="memory.lan")
        assert status == 200


async def test_without_local_the_default_is_every_interface() -> None:
    env = clean_env(DATABASE_URL="postgresql://unused/none")
    async with running(TEST_RUNTIME, env) as (api, listening):
        addresses = {address for address, _ in listening_sockets(api.process.pid)}
        # "::" only where the machine has IPv6 (asyncio skips a family it cannot open).
        assert "0.0.0.0" in addresses and addresses <= {"0.0.0.0", "::"}
        assert listening["endpoint"] == f"POST http://<host>:{listening['port']}/mcp"
        status, _ = await post_mcp(listening["port"], host="mcp-memory.agent-mcps.svc")
        assert status == 200


IPV6 = pytest.mark.skipif(not socket.has_ipv6, reason="needs IPv6 loopback")


@pytest.mark.parametrize(
    ("host_env", "flags", "expected", "endpoint_host"),
    [
        pytest.param("127.0.0.1", [], "127.0.0.1", "127.0.0.1", id="HOST"),
        pytest.param("0.0.0.0", ["--host", "127.0.0.1"], "127.0.0.1", "127.0.0.1", id="flag"),
        pytest.param("::1", [], "::1", "[::1]", id="ipv6", marks=IPV6),
        pytest.param("localhost", [], "127.0.0.1", "127.0.0.1", id="localhost"),
    ],
)
async def test_host_and_the_host_flag_choose_the_address(
    host_env: str, flags: list[str], expected: str, endpoint_host: str
) -> None:
    env = clean_env(DATABASE_URL="postgresql://unused/none", HOST=host_env)
    async with running([*TEST_RUNTIME, *flags], env) as (api, listening):
        port = listening["port"]
        assert listening_sockets(api.process.pid) == {(expected, port)}
        assert listening["endpoint"] == f"POST http://{endpoint_host}:{port}/mcp"
        status, _ = await post_mcp(port, host="evil.example", address=expected)
        assert status == 421
        status, _ = await post_mcp(port, host=f"{endpoint_host}:{port}", address=expected)
        assert status == 200


async def test_a_bad_host_flag_is_refused_naming_the_flag() -> None:
    env = clean_env(DATABASE_URL="postgresql://unused/none")
    api = await start([str(CONSOLE_SCRIPT), "--host", "my laptop"], env)
    assert await api.exit_code(timeout_s=BOOT_TIMEOUT_S) == 2
    lines = " ".join(event["line"] for event in api.events if event["event"] == "raw")
    assert "argument --host: --host must be an IP address" in lines
    assert "Traceback" not in lines
