"""A port another server holds is refused at once, naming the variable and the flag that choose
another: the probe itself, and both console scripts before anything opens."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.process.ports import taken_on
from tests.api._process import clean_env

SCRIPTS = Path(sys.executable).parent


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port something listens on, on 127.0.0.1."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def test_a_listened_port_is_taken_where_it_is_and_wherever_every_interface_is(
    held_port: int,
) -> None:
    assert taken_on(("127.0.0.1",), held_port) == "127.0.0.1"
    # Every interface includes loopback: that bind would collide as well.
    assert taken_on(("0.0.0.0", "::"), held_port) == "0.0.0.0"


def test_a_free_port_and_port_zero_are_not_taken(held_port: int) -> None:
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        free = int(spare.getsockname()[1])
    assert taken_on(("127.0.0.1",), free) is None
    assert taken_on(("127.0.0.1",), 0) is None


@pytest.mark.parametrize(
    ("script", "flag", "variable"),
    [
        ("mcp-memory-api", "--port", "PORT"),
        ("mcp-memory-compactor", "--metrics-port", "METRICS_PORT"),
    ],
)
def test_a_held_port_is_refused_before_the_embedded_database_starts(
    held_port: int, tmp_path: Path, script: str, flag: str, variable: str
) -> None:
    data_dir = tmp_path / "data"
    result = subprocess.run(
        [str(SCRIPTS / script), "--local", "--data-dir", str(data_dir), flag, str(held_port)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    refusal = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert refusal == [
        f"startup error: port {held_port} is already in use on "
        f"{'127.0.0.1' if script == 'mcp-memory-api' else '0.0.0.0'} (another server is "
        f"listening there); choose another with {variable}=<port> or {flag} <port> (0 picks a "
        "free one)"
    ], result.stderr
    assert not data_dir.exists()  # refused before the embedded PostgreSQL was started
