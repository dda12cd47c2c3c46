"""The log's two forms: JSON lines unless a person is reading (a terminal, or LOG_FORMAT=text),
and then text on stderr whose start-up info lines wait for the banner."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from shared.process.logs import (
    JsonLineFormatter,
    TextLineFormatter,
    configure_logging,
    start_announced,
    text_wanted,
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize(
    ("log_format", "stream", "expected"),
    [
        ("auto", _Terminal(), True),
        ("auto", io.StringIO(), False),
        ("auto", _Closed(), False),
        ("json", _Terminal(), False),
        ("text", io.StringIO(), True),
    ],
)
def test_text_is_for_a_terminal_unless_asked_otherwise(
    log_format: str, stream: io.StringIO, expected: bool
) -> None:
    assert text_wanted(log_format, stream) is expected  # type: ignore[arg-type]


def _record(level: int, event: str, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("t", level, __file__, 1, event, None, None)
    record.__dict__.update(extra)
    return record


def test_a_text_line_has_the_event_its_detail_and_its_fields() -> None:
    record = _record(logging.WARNING, "ui_unavailable", port=3001, detail="port taken")
    line = TextLineFormatter().format(record)
    assert line.endswith(" warning ui_unavailable: port taken (port=3001)")
    assert line[2] == ":" and line[5] == ":"  # the clock first: HH:MM:SS
    assert (
        TextLineFormatter()
        .format(_record(logging.INFO, "shutdown_complete"))
        .endswith(" info shutdown_complete")
    )


def test_the_json_line_is_unchanged() -> None:
    line = JsonLineFormatter().format(_record(logging.INFO, "listening", port=3000))
    assert json.loads(line) == {"level": "info", "event": "listening", "port": 3000}


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_text_holds_info_lines_back_until_the_banner_but_never_warnings(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(text=True)
    log = logging.getLogger("tests.logs")
    log.info("boot_objects_frozen", extra={"objects": 1})
    log.warning("ui_unavailable", extra={"detail": "port taken"})
    start_announced()
    log.info("tool_call", extra={"tool": "recall", "ms": 3})
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert "warning ui_unavailable: port taken" in lines[0]
    assert "info tool_call (tool=recall, ms=3)" in lines[1]
