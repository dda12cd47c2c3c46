"""Helpers for tests that boot the PostgreSQL backend in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]

# Opens the stores from the environment like a service would, logging JSON lines to stdout.
BOOT_SCRIPT = """
import asyncio, os, sys
from shared.config import load_config
from shared.process.logs import configure_logging
from shared.storage import open_stores

async def main():
    configure_logging()
    async with open_stores(load_config(os.environ)) as stores:
        await stores.objects.list("", limit=1)
        assert "aiobotocore" not in sys.modules, "aiobotocore was imported"
        print("BOOTED", flush=True)

asyncio.run(main())
"""


def boot_env(**variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(variables)
    env["PYTHONPATH"] = str(REPO_ROOT)
    return env


def start_boot(**variables: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", BOOT_SCRIPT],
        env=boot_env(**variables),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def log_lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
