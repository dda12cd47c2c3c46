"""A bench runner killed in any way leaves none of its servers running (``bench._server``).

A killed or timed-out run used to leave its ``mcp-memory-api --local`` servers, and their
embedded PostgreSQL, running for hours. Real processes here: a minimal runner starts one server
through ``ApiServer.start`` as the benchmark does, is killed with SIGTERM (its handler stops the
server) or SIGKILL (which no handler sees: the kernel's parent-death signal kills the server),
and everything that served its data dir must be gone within seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
# About 5 s on a quiet machine (initdb, PostgreSQL, the model); the margin is for a busy one.
BOOT_TIMEOUT_S = 120
GONE_WITHIN_S = 15

RUNNER = """
import asyncio, sys
from pathlib import Path
from bench._server import ApiServer, exit_on_sigterm

async def main() -> None:
    server = await ApiServer.start(Path(sys.argv[1]))
    try:
        print(server.process.pid, flush=True)
        await asyncio.Event().wait()
    finally:
        await server.stop()

exit_on_sigterm()
asyncio.run(main())
"""


def serving(data_dir: Path) -> list[psutil.Process]:
    """The processes naming ``data_dir`` (API server, keeper, postmaster) and their children
    (PostgreSQL's backends, whose command lines do not name it)."""
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error):
            if str(data_dir) in " ".join(proc.info["cmdline"] or []):
                for member in (proc, *proc.children(recursive=True)):
                    found[member.pid] = member
    return list(found.values())


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running. A zombie is not: orphans wait for init to reap them."""
    running = []
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            # is_running compares start times too: a recycled pid is not the process.
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                running.append(proc)
    return running


def commands(processes: list[psutil.Process]) -> list[str]:
    lines = []
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            lines.append(" ".join(proc.cmdline()))
    return lines


@pytest.mark.timeout(BOOT_TIMEOUT_S + GONE_WITHIN_S + 30)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_runner_leaves_none_of_its_servers_running(
    tmp_path: Path, signum: signal.Signals
) -> None:
    data_dir = tmp_path / "db"
    with (tmp_path / "runner.log").open("w+") as log:
        # Its own session, like a runner started from a shell: the test kills the runner alone.
        runner = subprocess.Popen(
            [sys.executable, "-c", RUNNER, str(data_dir)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
        )
        served: list[psutil.Process] = []
        try:
            assert runner.stdout is not None
            announced = runner.stdout.readline().strip()  # the server's pid once it is healthy
            log.seek(0)
            assert announced.isdigit(), log.read()[-4000:]
            served = serving(data_dir)
            assert int(announced) in [proc.pid for proc in served], commands(served)
            assert any("bin/postgres -D" in line for line in commands(served)), commands(served)

            os.kill(runner.pid, signum)
            killed = time.monotonic()
            code = runner.wait(GONE_WITHIN_S)
            # SIGTERM is an exit that runs the runner's finally blocks, with a signal's code.
            assert code == (128 + signum if signum == signal.SIGTERM else -signum)
            while left := alive(served) + alive(serving(data_dir)):
                took = time.monotonic() - killed
                assert took < GONE_WITHIN_S, f"still running: {commands(left)}"
                time.sleep(0.1)
            took = time.monotonic() - killed
            print(f"{len(served)} processes gone {took:.1f} s after {signum.name}")
        finally:
            # A failing run must not leak what it checks for: the runner, then what it served.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
            for proc in alive(served):
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
