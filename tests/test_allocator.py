"""The allocator settings both processes apply at start (shared.process.allocator), each in a fresh
interpreter: mallopt changes the whole process, and the test run's own must stay as it is."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from shared.process.allocator import SETTINGS

pytestmark = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="the settings are glibc's"
)


def applied_in_fresh_process(environ: dict[str, str]) -> dict[str, int]:
    code = (
        "import json, sys; from shared.process.allocator import tune_allocator; "
        "print(json.dumps(tune_allocator(json.loads(sys.argv[1]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(environ)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    applied: dict[str, int] = json.loads(done.stdout)
    return applied


def test_every_setting_is_accepted_by_glibc() -> None:
    assert applied_in_fresh_process({}) == {name: value for name, _, value in SETTINGS}


def test_a_setting_the_operator_gave_glibc_is_left_to_it() -> None:
    applied = applied_in_fresh_process({"MALLOC_ARENA_MAX": "8"})
    assert "MALLOC_ARENA_MAX" not in applied
    assert set(applied) == {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}
