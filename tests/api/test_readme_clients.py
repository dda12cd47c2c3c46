"""The README's client commands, read from the README and run as it writes them: the Claude Code
CLI adds the stdio server and lists it connected, the pinned MCP Inspector CLI calls the server
over HTTP and launches it over stdio, curl calls a tool with the tenant header, and the Python
example (the official MCP client) remembers and recalls; every client configuration is JSON that
sets the tenant.

What is not the README's own: the tools resolve to the copies ``tests/thirdparty`` installs
(``npx <package>@<version>`` becomes the installed launcher of that same pinned version, on its
Node 24), the bare ``mcp-memory-api`` resolves to this venv's (as pipx would put one on PATH),
HOME is a fresh folder (so ``--local`` keeps its data there and Claude Code its configuration),
and the HTTP server listens on a free port instead of 3000, which the URL is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from services.api.stdio.sharing import stop_resident
from shared.errors import StorageUnavailableError
from shared.storage.postgres.embedded import embedded_database, pgdata_path
from tests.api._process import CONSOLE_SCRIPT, REPO, clean_env, remember_over_http, start, stop
from tests.api.test_inspector_cli import INSPECTOR, INSTALL, NODE, THIRDPARTY

README = REPO / "README.md"
INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
# The native binary the package's launcher runs (its postinstall copies it over the launcher);
# taken directly, so an npm that skips install scripts still leaves a runnable CLI.
CLAUDE_BINARIES = sorted(THIRDPARTY.glob("node_modules/@anthropic-ai/claude-code-linux-*/claude"))
RUN_TIMEOUT_S = 120.0


def pinned(package: str) -> str:
    """The version tests/thirdparty pins for ``package``."""
    manifest = json.loads((THIRDPARTY / "package.json").read_text())
    return str(manifest["dependencies"][package])


def readme_commands() -> list[list[str]]:
    """Every command of the README's ``sh`` blocks, as argv (continued lines joined, comments
    and ``&&`` chains split as a shell would)."""
    commands: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while "&&" in words:
                cut = words.index("&&")
                commands.append(words[:cut])
                words = words[cut + 1 :]
            if words:
                commands.append(words)
    return commands


def readme_command(*prefix: str, containing: str | None = None) -> list[str]:
    """The one README command starting with ``prefix`` (and holding ``containing``)."""
    found = [
        argv
        for argv in readme_commands()
        if argv[: len(prefix)] == list(prefix) and (containing is None or containing in argv)
    ]
    assert len(found) == 1, f"README: expected one `{' '.join(prefix)}` command, found {found}"
    return found[0]


def require(present: bool, what: str) -> None:
    if present:
        return
    reason = f"{what} is not installed; run: {INSTALL}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: this test must run in CI)")
    pytest.skip(reason)


def inspector_argv(readme_argv: list[str]) -> list[str]:
    """``npx @modelcontextprotocol/inspector@V …`` as the installed Inspector of version V."""
    npx, package, *rest = readme_argv
    assert npx == "npx" and package == f"{INSPECTOR_PACKAGE}@{pinned(INSPECTOR_PACKAGE)}", (
        f"the README must pin the Inspector the tests install: {package}"
    )
    require(NODE.exists() and INSPECTOR.exists(), "MCP Inspector CLI")
    return [str(NODE), str(INSPECTOR), *rest]


def user_env(home: Path) -> dict[str, str]:
    """A newcomer's shell: a fresh HOME, and mcp-memory-api on PATH."""
    home.mkdir(parents=True, exist_ok=True)
    path = f"{CONSOLE_SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return clean_env(HOME=str(home), PATH=path)


async def run(argv: list[str], env: dict[str, str], *, cwd: Path) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_S)
    return process.returncode or 0, out.decode(), err.decode()


async def embedded_server_stopped(data_dir: Path, *, timeout_s: float = 60.0) -> None:
    """Stop the embedded PostgreSQL the client's server left running for its grace (a client
    starts the server with an environment of its own, so the suite's PG_EMBEDDED_GRACE_S=0 does
    not reach it), waiting for a server still finishing its start: this test joins the keeper
    and leaves it with no grace until the database has stopped, once the resident the server
    left (services.api.stdio.sharing) has stopped."""
    assert await asyncio.to_thread(stop_resident, data_dir), "the resident did not stop"
    pid_file = pgdata_path(data_dir) / "postmaster.pid"
    deadline = time.monotonic() + timeout_s
    while pid_file.exists():
        assert time.monotonic() < deadline, f"{pid_file} still there after {timeout_s} s"
        with contextlib.suppress(StorageUnavailableError):
            async with embedded_database(data_dir, grace_s=0):
                pass
        await asyncio.sleep(0.2)


@pytest.fixture
def home(embedded_data_dir: Path) -> Path:
    # Under the embedded-safe temporary folder: --local's default data dir lives in HOME.
    return embedded_data_dir / "home"


def test_the_readme_pins_what_the_tests_install() -> None:
    inspector_commands = [argv for argv in readme_commands() if argv[:1] == ["npx"]]
    assert len(inspector_commands) == 2
    for argv in inspector_commands:
        assert argv[1] == f"{INSPECTOR_PACKAGE}@{pinned(INSPECTOR_PACKAGE)}", argv
    assert "`claude mcp list`" in README.read_text()


async def test_claude_code_adds_the_server_and_lists_it_connected(home: Path) -> None:
    require(bool(CLAUDE_BINARIES), f"{CLAUDE_PACKAGE} (Claude Code CLI)")
    claude = str(CLAUDE_BINARIES[0])
    # Claude Code is told to keep off the network (telemetry, update checks): CI has none.
    env = {**user_env(home), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    project = home / "my-project"
    project.mkdir()
    add = readme_command("claude", "mcp", "add")
    code, out, err = await run([claude, *add[1:]], env, cwd=project)
    assert code == 0, out + err
    assert "Added stdio MCP server memory" in out, out
    try:
        # `claude mcp list` starts the server, completes the handshake and reports it; no API
        # key or network is needed for that.
        code, out, err = await run([claude, "mcp", "list"], env, cwd=project)
        assert code == 0, out + err
        (line,) = [line for line in out.splitlines() if line.startswith("memory:")]
        assert line.endswith("✔ Connected"), out + err
    finally:
        await embedded_server_stopped(home / ".local" / "share" / "mcp-memory")


@pytest.fixture
async def readme_http_server(home: Path) -> AsyncIterator[str]:
    """The README's first command's server, `mcp-memory-api --local`, on a free port."""
    first = readme_commands()[0:4]
    assert first[-1] == ["mcp-memory-api", "--local"], first
    api = await start([str(CONSOLE_SCRIPT), "--local", "--port", "0"], user_env(home))
    try:
        listening = await api.wait_for("listening", timeout_s=RUN_TIMEOUT_S)
        yield str(listening["port"])
    finally:
        api.process.terminate()
        await api.exit_code(timeout_s=60)
        await stop(api)


async def test_the_inspector_remembers_over_http_as_the_readme_writes(
    readme_http_server: str, home: Path
) -> None:
    argv = inspector_argv(readme_command("npx", containing="http"))
    url = "http://127.0.0.1:3000/mcp"
    assert url in argv
    argv[argv.index(url)] = url.replace("3000", readme_http_server)
    code, out, err = await run(argv, user_env(home), cwd=home)
    assert code == 0, out + err
    result: dict[str, Any] = json.loads(out)
    assert result["isError"] is False, result
    assert result["content"][0]["text"].startswith("[MEMORY] Stored as "), result


async def test_the_inspector_launches_the_server_over_stdio_as_the_readme_writes(
    home: Path,
) -> None:
    argv = inspector_argv(readme_command("npx", containing="--stdio"))
    try:
        code, out, err = await run(argv, user_env(home), cwd=home)
        assert code == 0, out + err
        listed: dict[str, Any] = json.loads(out)
        assert [tool["name"] for tool in listed["tools"]][:2] == ["recall", "remember"]
    finally:
        await embedded_server_stopped(home / ".local" / "share" / "mcp-memory")


def test_every_client_configuration_is_json_that_sets_the_tenant() -> None:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) == 4
    for block in blocks:
        config: dict[str, Any] = json.loads(block)
        (server,) = (config.get("mcpServers") or config["servers"]).values()
        tenant = (
            server.get("headers", {}).get("X-Memory-Tenant") or server["env"]["MCP_MEMORY_TENANT"]
        )
        assert tenant == "my-project", block


async def test_curl_recalls_over_http_as_the_readme_writes(
    readme_http_server: str, home: Path
) -> None:
    if shutil.which("curl") is None:
        reason = "curl is not installed (apt-get install curl)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: this test must run in CI)")
        pytest.skip(reason)
    argv = readme_command("curl")
    url = "http://127.0.0.1:3000/mcp"
    assert url in argv
    argv[argv.index(url)] = url.replace("3000", readme_http_server)
    code, out, err = await run(argv, user_env(home), cwd=home)
    assert code == 0, out + err
    answer: dict[str, Any] = json.loads(out)
    assert answer["result"]["isError"] is False, answer
    assert answer["result"]["content"][0]["text"].startswith("[MEMORY] "), answer


async def test_the_python_example_remembers_and_recalls_as_the_readme_writes(
    readme_http_server: str, home: Path
) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    url = "http://127.0.0.1:3000/mcp"
    assert url in block
    script = home / "example.py"
    script.write_text(block.replace(url, url.replace("3000", readme_http_server)))
    code, out, err = await run([sys.executable, str(script)], user_env(home), cwd=home)
    assert code == 0, out + err
    assert out.startswith("[MEMORY] 1 memory matched"), out + err
    assert "Releases are tagged vX.Y.Z" in out, out


async def test_the_backup_commands_run_as_the_readme_writes(
    readme_http_server: str, home: Path
) -> None:
    """The README's export, import and dry-run import --from, each line run by a shell as written,
    in the HOME whose data dir the README's server is using (and stops with it)."""
    (block,) = [
        block
        for block in re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL)
        if block.startswith("mcp-memory export")
    ]
    export, import_back, dry_run = block.strip().splitlines()
    # Something to export, stored through the server; a reference-server file to convert.
    stored = await remember_over_http(
        readme_http_server, "We deploy with make deploy", tenant="my-project"
    )
    assert stored["isError"] is False, stored
    entity = {"type": "entity", "name": "Billing API", "entityType": "service"}
    (home / "memory.jsonl").write_text(json.dumps({**entity, "observations": ["Owned by Maria"]}))
    env = user_env(home)
    code, out, err = await run(["bash", "-c", export], env, cwd=home)
    assert code == 0, out + err
    (line,) = (home / "my-project.jsonl").read_text().splitlines()
    assert json.loads(line)["content"] == "We deploy with make deploy", line
    code, out, err = await run(["bash", "-c", import_back], env, cwd=home)
    assert code == 0, out + err
    code, out, err = await run(["bash", "-c", dry_run], env, cwd=home)
    assert code == 0, out + err
    assert "Owned by Maria" in out, out + err
