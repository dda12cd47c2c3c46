from __future__ import annotations

import argparse

import pytest

from shared.process.cli import add_local_arguments, add_version_argument, port_type
from shared.process.version import installed_version


@pytest.mark.parametrize("raw", ["-1", "65536", "http", ""])
def test_a_bad_port_flag_is_refused_naming_the_flag_and_range(raw: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"--metrics-port must be between 0 and"):
        port_type("--metrics-port")(raw)


@pytest.mark.parametrize(("raw", "expected"), [("0", 0), ("3000", 3000), ("65535", 65535)])
def test_a_good_port_flag_parses(raw: str, expected: int) -> None:
    assert port_type("--port")(raw) == expected


def test_local_flags_parse_a_data_dir() -> None:
    parser = argparse.ArgumentParser()
    add_local_arguments(parser, local_help="x")
    args = parser.parse_args(["--local", "--data-dir", "/tmp/x"])
    assert args.local is True and str(args.data_dir) == "/tmp/x"
    assert parser.parse_args([]).local is False


def test_version_prints_the_program_and_the_installed_release(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="mcp-memory-api")
    add_version_argument(parser)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"mcp-memory-api {installed_version()}\n"
