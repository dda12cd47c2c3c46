"""``mcp-memory-api --stdio``: the official MCP client launches the server as a child process,
as desktop and IDE clients do, on an embedded data dir; three such processes share one."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.api._process import CONSOLE_SCRIPT, clean_env, start, stop

BOOT_TIMEOUT_S = 120.0


def parameters(data_dir: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(CONSOLE_SCRIPT),
        args=["--stdio", "--local", "--data-dir", str(data_dir)],
        env=clean_env(**env),
    )


def ids_in(text: str) -> list[str]:
    return re.findall(r"\[id:([0-9A-Z]{26})\]", text)


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    assert not result.is_error, content.text
    return content.text


async def refusal_of(data_dir: Path, **env: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(CONSOLE_SCRIPT),
        "--stdio",
        "--local",
        "--data-dir",
        str(data_dir),
        env=clean_env(**env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), BOOT_TIMEOUT_S)
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "MCP_MEMORY_TENANT is required with --stdio"),
        ({"MCP_MEMORY_TENANT": "   "}, "MCP_MEMORY_TENANT is required with --stdio"),
        ({"MCP_MEMORY_TENANT": "../other"}, "MCP_MEMORY_TENANT must start with a letter or digit"),
        ({"MCP_MEMORY_TENANT": "t" * 129}, "MCP_MEMORY_TENANT is too long (max 128 characters)"),
        (
            {"MCP_MEMORY_TENANT": "acme", "MCP_MEMORY_CONVERSATION": "has space"},
            "MCP_MEMORY_CONVERSATION may carry printable ASCII only",
        ),
    ],
)
async def test_stdio_refuses_to_start_without_a_valid_tenant_naming_the_variable(
    embedded_data_dir: Path, env: dict[str, str], expected: str
) -> None:
    code, out, err = await refusal_of(embedded_data_dir, **env)
    assert code == 1
    assert out == ""  # stdout is the protocol's: never a refusal or a log line
    assert f"configuration error: {expected}" in err


async def test_the_official_client_remembers_and_recalls_over_stdio(
    embedded_data_dir: Path,
) -> None:
    # Opened in the test's own task: the SDK's stdio client holds an anyio cancel scope, which
    # a fixture would enter and leave in two different tasks.
    params = parameters(
        embedded_data_dir, MCP_MEMORY_TENANT="laptop", MCP_MEMORY_CONVERSATION="window-1"
    )
    async with Client(params, read_timeout_seconds=BOOT_TIMEOUT_S) as stdio_client:
        await _remember_and_recall(stdio_client)


LONG_NAME = "Raise NGINX_PROXY_TIMEOUT_Q2000 to 75 seconds."


async def _remember_and_recall(stdio_client: Client) -> None:
    listed = await stdio_client.list_tools()
    assert [t.name for t in listed.tools][:2] == ["recall", "remember"]
    fact = "The staging API listens on port 8443."
    stored = text_of(await stdio_client.call_tool("remember", {"content": fact}))
    assert stored.startswith("[MEMORY] Stored as ")
    # The conversation came from MCP_MEMORY_CONVERSATION: a conversation note is accepted.
    note = text_of(
        await stdio_client.call_tool(
            "remember",
            {"content": "In this window we debug the login flow.", "scope": "conversation"},
        )
    )
    assert "this conversation only" in note
    recall = await stdio_client.call_tool("recall", {"query": "which port is staging on"})
    assert fact in text_of(recall)
    # The same facts as structuredContent, validated by the client against the outputSchema.
    assert all(tool.output_schema for tool in listed.tools)
    assert recall.structured_content is not None
    assert recall.structured_content["results"][0]["text"] == fact
    # Answers sized for a model over stdio too: a long memory comes back as a preview, an
    # excerpt holding what matched, within a budget, and whole only through memory_get.
    postmortem = "The edge proxies queued requests during the outage. " * 560 + LONG_NAME
    assert 28_000 < len(postmortem.encode()) < 32_000
    kept = text_of(await stdio_client.call_tool("remember", {"content": postmortem}))
    assert len(kept) <= 1_000
    long_id = ids_in(kept)[0]
    found = text_of(await stdio_client.call_tool("recall", {"query": LONG_NAME}))
    assert len(found) <= 4_000 and LONG_NAME in found and ids_in(found)[0] == long_id
    small = text_of(await stdio_client.call_tool("recall", {"query": LONG_NAME, "max_tokens": 300}))
    assert len(small) <= 1_500 and ids_in(small)[0] == long_id
    whole = await stdio_client.call_tool("memory_get", {"id": long_id})
    assert postmortem in text_of(whole) and whole.structured_content is not None
    # The tenant is never an argument, on stdio as on HTTP.
    refused = await stdio_client.call_tool("memory_stats", {"tenant": "other"})
    assert refused.is_error and "the server's environment over stdio" in text_of_error(refused)


def text_of_error(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_stdout_carries_only_the_protocol_and_logs_go_to_stderr(
    embedded_data_dir: Path,
) -> None:
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": "Builds use Node 20."}},
        },
    ]
    process = await asyncio.create_subprocess_exec(
        str(CONSOLE_SCRIPT),
        "--stdio",
        "--local",
        "--data-dir",
        str(embedded_data_dir),
        env=clean_env(MCP_MEMORY_TENANT="laptop"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    for request in requests:
        process.stdin.write(json.dumps(request).encode() + b"\n")
    await process.stdin.drain()
    answers: list[dict[str, Any]] = []
    while len(answers) < 2:
        line = await asyncio.wait_for(process.stdout.readline(), BOOT_TIMEOUT_S)
        assert line, "stdout closed before both answers"
        answers.append(json.loads(line))
    process.stdin.close()  # the client leaves: the server flushes and exits 0
    rest, err = await asyncio.wait_for(process.communicate(), BOOT_TIMEOUT_S)
    assert process.returncode == 0, err.decode()[-2000:]
    # Every stdout line is a JSON-RPC message answering a request; nothing else was written.
    assert [a["id"] for a in answers] == [1, 2] and rest == b""
    assert all(a["jsonrpc"] == "2.0" and "result" in a for a in answers)
    assert "Stored as" in answers[1]["result"]["content"][0]["text"]
    events = [json.loads(line)["event"] for line in err.decode().splitlines() if line.strip()]
    assert "serving_stdio" in events and "tool_call" in events
    assert events[-1] == "shutdown_complete"


async def test_every_malformed_line_gets_a_json_rpc_error_and_the_server_stays_up(
    embedded_data_dir: Path,
) -> None:
    # Issue 42, item 11: the SDK's stdio transport dropped these lines unanswered.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
    lines = [
        json.dumps(initialize),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json {",
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": "all"}),
        json.dumps(
            [
                {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                {"jsonrpc": "2.0", "id": "five", "method": "tools/list"},
            ]
        ),
        json.dumps({"jsonrpc": "2.0", "id": 6, "params": {}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/bogus", "params": 7}),
        "",
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    ]
    process = await asyncio.create_subprocess_exec(
        str(CONSOLE_SCRIPT),
        "--stdio",
        "--local",
        "--data-dir",
        str(embedded_data_dir),
        env=clean_env(MCP_MEMORY_TENANT="laptop"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(line + "\n" for line in lines).encode())
    await process.stdin.drain()
    answers: dict[Any, dict[str, Any]] = {}
    while 7 not in answers:
        line = await asyncio.wait_for(process.stdout.readline(), BOOT_TIMEOUT_S)
        assert line, f"stdout closed with answers to {sorted(map(str, answers))} only"
        answer = json.loads(line)
        answers[answer["id"]] = answer
    process.stdin.close()
    rest, err = await asyncio.wait_for(process.communicate(), BOOT_TIMEOUT_S)
    assert process.returncode == 0, err.decode()[-2000:]
    assert rest == b""
    codes = {key: a["error"]["code"] for key, a in answers.items() if "error" in a}
    assert codes == {None: -32700, 3: -32602, 4: -32600, "five": -32600, 6: -32600}, answers
    assert "`params` must be an object" in answers[3]["error"]["message"]
    assert "batches are not supported" in answers[4]["error"]["message"]
    assert "result" in answers[1] and answers[7]["result"] == {}
    # The log says what was refused, never the line itself.
    logged = [json.loads(x) for x in err.decode().splitlines() if x.strip()]
    malformed = [entry for entry in logged if entry["event"] == "stdio_malformed_line"]
    assert len(malformed) == 5 and "not json" not in err.decode()


CODENAMES = (
    "amber basil cedar dahlia elm fennel garnet hazel iris juniper kale lotus "
    "maple nutmeg olive pepper quince rowan sage thyme umber violet willow yarrow"
).split()


def fact(window: int, rule: int) -> str:
    codename = CODENAMES[8 * window + rule]
    return f"Window {window} picked the codename {codename} for release {rule}."


async def test_three_stdio_processes_share_one_embedded_data_dir(embedded_data_dir: Path) -> None:
    """Window 0 stays open throughout; windows 1 and 2 write and read beside it, then close.
    The embedded server outlives them for window 0 (the last user stops it), and a fourth
    process started afterwards sees everything."""
    params = parameters(embedded_data_dir, MCP_MEMORY_TENANT="shared-laptop")
    per_window = 8

    async def write(client: Client, number: int, rules: range) -> list[str]:
        ids = []
        for n in rules:
            text = text_of(await client.call_tool("remember", {"content": fact(number, n)}))
            assert text.startswith("[MEMORY] Stored as "), text
            ids.append(text.split()[3].rstrip("."))
            # Reads between the writes, while the other windows write too.
            text_of(await client.call_tool("recall", {"query": f"release {n} codename"}))
        return ids

    async def window(number: int) -> list[str]:
        async with Client(params, read_timeout_seconds=BOOT_TIMEOUT_S) as client:
            return await write(client, number, range(per_window))

    async with Client(params, read_timeout_seconds=BOOT_TIMEOUT_S) as first:
        written = list(
            await asyncio.gather(write(first, 0, range(per_window // 2)), window(1), window(2))
        )
        # The other two have exited: this one goes on writing and reading.
        written.append(await write(first, 0, range(per_window // 2, per_window)))
        assert "24 memories for this project" in text_of(await first.call_tool("memory_stats", {}))
    every = {memory_id for ids in written for memory_id in ids}
    assert len(every) == 3 * per_window
    async with Client(params, read_timeout_seconds=BOOT_TIMEOUT_S) as client:
        listed = text_of(await client.call_tool("list_memories", {"limit": 50}))
        assert {
            line.split("[id:")[1][:26] for line in listed.splitlines() if "[id:" in line
        } == every
        assert f"{3 * per_window} memories for this project" in text_of(
            await client.call_tool("memory_stats", {})
        )
        # Written by the third window, found by the fourth process.
        recalled = text_of(await client.call_tool("recall", {"query": "codename violet"}))
        assert fact(2, 5) in recalled


async def test_a_signal_stops_the_server_even_while_its_client_keeps_stdin_open(
    embedded_data_dir: Path,
) -> None:
    """A client that signals without closing stdin: the SDK's stdin reader cannot be
    interrupted, so the server must not wait for it, and still leaves its runtime cleanly."""
    api = await start(
        [str(CONSOLE_SCRIPT), "--stdio", "--local", "--data-dir", str(embedded_data_dir)],
        clean_env(MCP_MEMORY_TENANT="laptop"),
        stdin=True,
    )
    try:
        await api.wait_for("serving_stdio", timeout_s=BOOT_TIMEOUT_S)
        api.process.send_signal(signal.SIGTERM)
        assert await api.exit_code(timeout_s=30) == 0
        assert api.names()[-1] == "shutdown_complete"
    finally:
        await stop(api)
