"""A ``--local`` data dir that cannot be used is refused before the embedded PostgreSQL starts:
one plain line on stderr naming the path, why, and the flag (or HOME) that fixes it, exit 2.
The real console scripts, as a user runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from shared.process.cli import DEFAULT_DATA_DIR
from tests.api._process import clean_env

BIN = Path(sys.executable).parent
API, COMPACTOR, OPERATOR = BIN / "mcp-memory-api", BIN / "mcp-memory-compactor", BIN / "mcp-memory"


def run(args: list[str], *, prefix: tuple[str, ...] = (), **env: str) -> tuple[int, str, str]:
    result = subprocess.run(
        [*prefix, *args],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr


def refusal(code: int, stderr: str) -> str:
    """The one line of a data-dir refusal (exit 2, no traceback)."""
    assert code == 2, stderr
    assert "Traceback" not in stderr
    (line,) = stderr.splitlines()
    assert line.startswith("data dir error: ")
    assert "its log is" not in line
    return line


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a folder\n")
    return path


@pytest.mark.parametrize(
    "command",
    [
        [str(API), "--local"],
        [str(COMPACTOR), "--local"],
        [str(OPERATOR), "export", "--all", "--local"],
    ],
    ids=["api", "compactor", "operator"],
)
def test_a_data_dir_that_is_a_file_is_refused(command: list[str], a_file: Path) -> None:
    line = refusal(*run([*command, "--data-dir", str(a_file)])[::2])
    assert f"{a_file} (given by --data-dir) is a file, not a folder" in line
    assert "--data-dir DIR" in line and f"the default, {DEFAULT_DATA_DIR} (under HOME)" in line
    assert a_file.read_text() == "not a folder\n"


def test_a_data_dir_under_a_file_is_refused_naming_the_file(a_file: Path) -> None:
    line = refusal(*run([str(API), "--local", "--data-dir", str(a_file / "db")])[::2])
    assert f"{a_file / 'db'} (given by --data-dir) cannot be created: {a_file} is a file" in line
    assert "--data-dir DIR" in line


def test_the_default_data_dir_under_an_unusable_home_names_home_and_the_flag(a_file: Path) -> None:
    line = refusal(*run([str(API), "--local"], HOME=str(a_file))[::2])
    default = a_file / ".local" / "share" / "mcp-memory"
    assert f"{default} (the default, under HOME) cannot be created: {a_file} is a file" in line
    assert "--data-dir DIR" in line and "set HOME" in line


def test_migrate_names_the_side_whose_data_dir_is_refused(tmp_path: Path, a_file: Path) -> None:
    command = [str(OPERATOR), "migrate", "--all", "--from-local", "--from-data-dir"]
    command += [str(tmp_path / "from"), "--to-local", "--to-data-dir", str(a_file)]
    line = refusal(*run(command)[::2])
    assert f"{a_file} (given by --to-data-dir) is a file, not a folder" in line
    assert "--to-data-dir DIR" in line


def _as_another_user() -> tuple[str, ...]:
    """A prefix that runs a command as a user without root's rights over files."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, which writes anywhere, and setpriv is missing to drop it")
    return (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")


def test_a_data_dir_this_user_cannot_write_is_refused_naming_the_user() -> None:
    prefix = _as_another_user()
    # Under /tmp itself, reachable by the other user (pytest's tmp_path is its owner's only).
    top = Path(tempfile.mkdtemp(prefix="mcp-memory-data-dir-"))
    top.chmod(0o755)
    locked = top / "locked"
    locked.mkdir(mode=0o555)
    hidden = top / "hidden"
    hidden.mkdir(mode=0o000)
    try:
        for data_dir, why in [
            (locked, "is not writable by user"),
            (locked / "db", f"cannot be created: {locked} is not writable by user"),
            (hidden / "db", "cannot be reached: user"),
        ]:
            args = [str(API), "--local", "--data-dir", str(data_dir)]
            line = refusal(*run(args, prefix=prefix)[::2])
            assert f"{data_dir} (given by --data-dir) {why}" in line
            assert "--data-dir DIR" in line
        assert f"may not look inside {hidden};" in line
    finally:
        hidden.chmod(0o755)
        shutil.rmtree(top)


@pytest.mark.parametrize("command", [[str(API)], [str(OPERATOR)], [str(OPERATOR), "export"]])
def test_help_states_the_data_dir_default_in_plain_text(command: list[str]) -> None:
    code, out, err = run([*command, "--help"], COLUMNS="400")  # no wrapping inside the path
    assert code == 0, err
    assert f"default: {DEFAULT_DATA_DIR}" in out or f"lives in {DEFAULT_DATA_DIR}" in out
    assert "``" not in out


def test_the_embedded_server_names_its_log_only_when_there_is_one(a_file: Path) -> None:
    """Reached without the check (a library caller): the error still names no made-up log."""
    from shared.errors import StorageUnavailableError
    from shared.storage.postgres.embedded import acquire_server

    with pytest.raises(StorageUnavailableError) as refused:
        acquire_server(a_file)
    assert f"embedded postgres at {a_file} could not start" in str(refused.value)
    assert "its log is" not in str(refused.value)
