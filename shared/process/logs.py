"""JSON-lines logging: one line per event, info to stdout and warnings/errors to stderr.

Modules log with ``logger.info("tool_call", extra={"tenant": t, "tool": name, "ms": 12})``: the
message is the event name and the ``extra`` fields become keys of the line. Never pass memory
content, a query, tags or a conversation id: lines are for operators, not for the data.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Final

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


class _BelowWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno < logging.WARNING


def configure_logging(level: int = logging.INFO, *, stdout_is_protocol: bool = False) -> None:
    """Route the root logger to stdout (below WARNING) and stderr (WARNING and up) as JSON; or,
    when stdout carries MCP's stdio transport, every line to stderr."""
    formatter = JsonLineFormatter()
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(formatter)
    handlers: list[logging.Handler] = [err]
    if not stdout_is_protocol:
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
