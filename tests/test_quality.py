"""The machine-enforced style: ruff (lint and format) and mypy --strict run as part of the suite,
so the one test command is also the one quality gate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_lint_is_clean() -> None:
    result = run(sys.executable, "-m", "ruff", "check", "shared", "services", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = run(sys.executable, "-m", "ruff", "format", "--check", "shared", "services")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean_on_shared_and_services() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean_on_tests_and_bench() -> None:
    """The same strict settings, and the bodies of untyped functions checked too: a test's
    wrong call is a test that checks nothing."""
    result = run(sys.executable, "-m", "mypy", "--check-untyped-defs", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr
