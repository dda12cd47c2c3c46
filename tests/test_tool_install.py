"""Installed as a tool (``pipx install .``, ``uv tool install .``), the console scripts run from
the wheel alone: nothing reads the clone at run time.

What pipx does, without the network: the project built as a wheel and installed into a fresh
venv of its own. The dependencies are this venv's, seen through a path entry (which does not run
this venv's editable-install hook, so the clone itself stays out of reach), and every command
runs from another directory with no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from tests.conftest import CLEARED_ENV_PREFIXES

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = ("mcp-memory-api", "mcp-memory-compactor", "mcp-memory")
REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "tool-install-test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"content": "Tools live in ~/.local/bin."}},
    },
]


def run(
    argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def tool_venv(tmp_path: Path) -> Path:
    """A venv holding the project's wheel and nothing of the clone; its bin folder."""
    # Built from a copy: an in-tree build would leave build/ in the clone.
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md"):
        source.mkdir(exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    for package in ("shared", "services"):
        shutil.copytree(
            REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    wheels = tmp_path / "wheels"
    built = run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(wheels),
            str(source),
        ]
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("mcp_memory-*.whl")
    venv = tmp_path / "tool"
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    (Path(purelib.stdout.strip()) / "dependencies.pth").write_text(
        sysconfig.get_path("purelib") + "\n"
    )
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    installed = run([*pip, "install", "--no-deps", "--no-index", "--quiet", str(wheel)])
    assert installed.returncode == 0, installed.stderr
    return venv / "bin"


def test_the_console_scripts_run_from_the_installed_wheel_alone(
    tmp_path: Path, embedded_data_dir: Path
) -> None:
    data_dir = embedded_data_dir
    bin_dir = tool_venv(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_ENV_PREFIXES)}
    env.pop("PYTHONPATH", None)
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]

    for script in SCRIPTS:
        shown = run([str(bin_dir / script), "--version"], cwd=elsewhere, env=env)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip() == f"{script} {version}"
    where = run(
        [str(bin_dir / "python"), "-c", "import services, shared; print(services.__file__)"],
        cwd=elsewhere,
        env=env,
    )
    assert not where.stdout.strip().startswith(str(REPO)), where.stdout

    # The server itself: the local model and its tokenizer load from the installed package.
    served = subprocess.Popen(
        [str(bin_dir / "mcp-memory-api"), "--stdio", "--local", "--data-dir", str(data_dir)],
        cwd=elsewhere,
        env={**env, "MCP_MEMORY_TENANT": "tool"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert served.stdin is not None and served.stdout is not None
        for request in REQUESTS:
            served.stdin.write(json.dumps(request) + "\n")
        served.stdin.flush()
        answers = [json.loads(served.stdout.readline()) for _ in range(2)]
        served.stdin.close()  # the client leaves: the server flushes and exits 0
        assert served.wait(timeout=120) == 0
    finally:
        if served.poll() is None:
            served.kill()
            served.wait()
    assert answers[0]["result"]["serverInfo"]["version"] == version
    assert answers[1]["result"]["content"][0]["text"].startswith("[MEMORY] Stored as ")
