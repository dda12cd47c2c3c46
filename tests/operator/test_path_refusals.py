"""``mcp-memory`` refuses a file it cannot use in one line naming the flag, before it starts the
embedded PostgreSQL or loads the model (the real console script, as an operator runs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.api._process import clean_env

CLI = Path(sys.executable).parent / "mcp-memory"


def refused(args: list[str], data_dir: Path) -> tuple[int, str]:
    result = subprocess.run(
        [str(CLI), *args, "--local", "--data-dir", str(data_dir)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout == ""
    return result.returncode, result.stderr


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            ["import", "--input", "{tmp}/missing.jsonl"],
            "import refused: --input {tmp}/missing.jsonl: no such file",
        ),
        (
            ["import", "--input", "{tmp}"],
            "import refused: --input {tmp}: is a directory, not a file",
        ),
        (
            ["export", "--all", "--output", "{tmp}/no-such-dir/x.jsonl"],
            "export refused: --output {tmp}/no-such-dir/x.jsonl: the directory "
            "{tmp}/no-such-dir does not exist",
        ),
        (
            ["export", "--all", "--output", "{tmp}"],
            "export refused: --output {tmp}: is a directory, not a file",
        ),
    ],
)
def test_a_file_it_cannot_use_is_refused_in_one_line_before_anything_starts(
    tmp_path: Path, command: list[str], expected: str
) -> None:
    data_dir = tmp_path / "data"
    code, err = refused([part.format(tmp=tmp_path) for part in command], data_dir)
    assert code == 1
    assert err.splitlines() == [expected.format(tmp=tmp_path)], err
    # Nothing was started: the embedded database would have made its data dir.
    assert not data_dir.exists()


@pytest.mark.parametrize("side", ["from", "to"])
def test_a_missing_env_file_is_refused_by_its_flag(tmp_path: Path, side: str) -> None:
    other = "to" if side == "from" else "from"
    result = subprocess.run(
        [
            str(CLI),
            "migrate",
            f"--{side}-env",
            str(tmp_path / "missing.env"),
            f"--{other}-local",
            f"--{other}-data-dir",
            str(tmp_path / "data"),
            "--all",
        ],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"migrate refused: --{side}-env {tmp_path / 'missing.env'}: no such file"
    ]
    assert not (tmp_path / "data").exists()
