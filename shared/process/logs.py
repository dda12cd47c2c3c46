"""Logging: JSON lines (info to stdout, warnings and errors to stderr), or plain text lines on
a terminal.

Modules log with ``logger.info("tool_call", extra={"tenant": t, "tool": name, "ms": 12})``: the
message is the event name and the ``extra`` fields become keys of the line. Never pass memory
content, a query, tags or a conversation id: lines are for operators, not for the data.

JSON is what pods, CI, pipes and a stdio client's log get. A person who starts the API in a
terminal gets text instead (LOG_FORMAT, :func:`text_wanted`): every line on stderr, and the
info lines of start-up held back until the process has printed its banner, which says what they
said (where it listens, the page, the key) in a few lines a person reads.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Final, Literal, TextIO

LogFormat = Literal["auto", "json", "text"]
LOG_FORMATS: Final[tuple[LogFormat, ...]] = ("auto", "json", "text")

_STANDARD_ATTRS: Final = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__.keys() | {"message", "asctime"}
)


class JsonLineFormatter(logging.Formatter):
    """``{"level": "info", "event": <message>, ...extra}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {"level": record.levelname.lower(), "event": record.getMessage()}
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                line[key] = value
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            line.setdefault("message", str(error) or type(error).__name__)
            line.setdefault("type", type(error).__name__)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextLineFormatter(logging.Formatter):
    """``12:00:03 warning ui_unavailable: <detail> (port=3001)`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {
            key: value
            for key, value in record.__dict__.items()
            if key not in _STANDARD_ATTRS and not key.startswith("_")
        }
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            fields.setdefault("message", str(error) or type(error).__name__)
        clock = time.strftime("%H:%M:%S", time.localtime(record.created))
        line = f"{clock} {record.levelname.lower()} {record.getMessage()}"
        detail = fields.pop("detail", None)
        if detail is not None:
            line += f": {detail}"
        if fields:
            line += " (" + ", ".join(f"{key}={value}" for key, value in fields.items()) + ")"
        return line


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


class _QuietStart(logging.Filter):
    """Holds info lines back until :func:`start_announced`; warnings always pass."""

    def __init__(self) -> None:
        super().__init__()
        self.announced = False

    def filter(self, record: logging.LogRecord) -> bool:
        return self.announced or record.levelno >= logging.WARNING


def text_wanted(log_format: LogFormat, stream: TextIO) -> bool:
    """Whether a process's log goes out as text: asked for (LOG_FORMAT=text), or ``auto`` and
    ``stream`` (stderr) is a terminal, where a person reads it."""
    if log_format != "auto":
        return log_format == "text"
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def start_announced() -> None:
    """The banner is out: the text log's info lines flow from now on."""
    for handler in logging.getLogger().handlers:
        for found in handler.filters:
            if isinstance(found, _QuietStart):
                found.announced = True


def configure_logging(
    level: int = logging.INFO, *, stdout_is_protocol: bool = False, text: bool = False
) -> None:
    """Route the root logger to stdout (below WARNING) and stderr (WARNING and up) as JSON; or,
    when stdout carries MCP's stdio transport, every line to stderr. ``text``: every line to
    stderr as text, info lines held back until :func:`start_announced`."""
    formatter: logging.Formatter = TextLineFormatter() if text else JsonLineFormatter()
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(formatter)
    if text:
        err.addFilter(_QuietStart())
    handlers: list[logging.Handler] = [err]
    if not stdout_is_protocol and not text:
        err.setLevel(logging.WARNING)
        out = logging.StreamHandler(sys.stdout)
        out.addFilter(_BelowWarning())
        out.setFormatter(formatter)
        handlers.insert(0, out)
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level)
    # Third-party libraries log free text at INFO; keep their warnings only.
    for noisy in (
        "aiohttp.access",
        "botocore",
        "aiobotocore",
        "apscheduler",
        "mcp",
        "httpx2",
        "pgserver",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
