"""stdin for the stdio transport, screened line by line: every line the MCP SDK would drop
unanswered is answered here with a JSON-RPC error, as ``POST /mcp`` answers the same body.

The SDK's ``stdio_server`` turns a line it cannot validate into an exception on its read stream,
which the server only logs: a line that is not JSON got no -32700, a request whose ``params`` is
not an object got no answer at all (its client waited forever), and neither did a batch. So the
SDK is handed a stdin (``ScreenedStdin``) that yields only the lines it can read, and the rest
are answered through the transport's own write stream, the one writer of stdout. (To report
upstream: ``mcp.server.stdio.stdio_server`` should answer a line it cannot validate.)

Handing the SDK a stdin of our own skips its claim of fd 0, so ``claimed_stdin`` does what that
claim does: the wire is read from a private descriptor, and fd 0 points at the null device, so
nothing else in the process (or a child) can read a byte of the protocol.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final, Protocol, TextIO

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

logger = logging.getLogger(__name__)

NOT_JSON: Final = "Parse error: the line is not valid JSON"
NOT_A_MESSAGE: Final = "Invalid Request: a line must be one JSON-RPC 2.0 request or notification"
NO_BATCHES: Final = (
    "Invalid Request: JSON-RPC batches are not supported (MCP removed them in protocol "
    "2025-06-18); send each message on its own line"
)
PARAMS_NOT_OBJECT: Final = "Invalid params: `params` must be an object"


class Answers(Protocol):
    """Where the transport's outgoing messages go (the SDK's write stream)."""

    async def send(self, item: SessionMessage, /) -> None: ...


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def _id_of(message: object) -> str | int | None:
    """The id a malformed message carries, when it is one a JSON-RPC id may be."""
    found = message.get("id") if isinstance(message, dict) else None
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None


def _batch(messages: list[Any]) -> list[types.JSONRPCError]:
    """One error per request of the batch (its client waits for each id), or one for all."""
    ids: list[str | int | None] = [
        found for message in messages if (found := _id_of(message)) is not None
    ]
    return [_error(i, types.INVALID_REQUEST, NO_BATCHES) for i in ids or [None]]


def refusals(line: str) -> list[types.JSONRPCError] | None:
    """None for a line the SDK reads as a message; else the errors that answer it (none for a
    blank line, a malformed notification or a malformed response: JSON-RPC answers neither)."""
    if not line.strip():
        return []
    try:
        decoded = json.loads(line)
    except (ValueError, RecursionError):
        return [_error(None, types.PARSE_ERROR, NOT_JSON)]
    if isinstance(decoded, list):
        return _batch(decoded)
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        return None
    if not isinstance(decoded, dict):
        return [_error(None, types.INVALID_REQUEST, NOT_A_MESSAGE)]
    if "method" in decoded and "id" not in decoded:
        return []  # a notification: never answered
    if "method" not in decoded and ("result" in decoded or "error" in decoded):
        return []  # a response to the server: never answered either
    if "params" in decoded and not isinstance(decoded["params"], dict):
        return [_error(_id_of(decoded), types.INVALID_PARAMS, PARAMS_NOT_OBJECT)]
    return [_error(_id_of(decoded), types.INVALID_REQUEST, NOT_A_MESSAGE)]


class ScreenedStdin(anyio.AsyncFile[str]):
    """The lines of ``wire`` the SDK can read; each other line answered (see the module)."""

    def __init__(self, wire: TextIO) -> None:
        super().__init__(wire)
        self._answers: Answers | None = None
        self._ready = anyio.Event()

    def answer_with(self, answers: Answers) -> None:
        """The transport's write stream, known once ``stdio_server`` has opened it."""
        self._answers = answers
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self.readline():
            errors = refusals(line)
            if errors is None:
                yield line
                continue
            if not line.strip():
                continue  # a blank line between messages: nothing to answer or report
            codes = sorted({e.error.code for e in errors})
            # The line itself is never logged: it may carry a memory or a query.
            logger.warning("stdio_malformed_line", extra={"codes": codes, "answered": len(errors)})
            await self._ready.wait()
            assert self._answers is not None
            for error in errors:
                await self._answers.send(SessionMessage(error))


@contextlib.contextmanager
def claimed_stdin() -> Iterator[TextIO]:
    """The protocol's input as UTF-8 text on a private descriptor, fd 0 pointed at the null
    device meanwhile (restored after); stdin's own buffer when it cannot be moved."""
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        yield sys.stdin
        return
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False: a reading thread may still block on it when the transport leaves.
        binary = os.fdopen(private, "rb", closefd=False)
        yield io.TextIOWrapper(binary, encoding="utf-8", errors="replace")
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)
