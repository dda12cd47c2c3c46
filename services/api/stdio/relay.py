"""A stdio server served by the data dir's resident (``services.api.stdio.sharing``): it says
who its calls are from, then copies its stdin to the resident and the resident's answers to its
stdout, byte for byte, until either side ends. It imports nothing heavier than the
configuration, so a client's first answer does not wait for the MCP SDK or the model.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Final

from services.api.stdio.sharing import resident_log_path, resident_socket_path, serving_key
from shared.config import Config

logger = logging.getLogger(__name__)

# The resident answers the hello once it has imported the SDK (well under a second); past this,
# the client is better served by a process of its own.
HELLO_WAIT_S: Final = 10.0
_CHUNK: Final = 65536


def _hello_answer(sock: socket.socket) -> tuple[dict[str, object], bytes]:
    """The resident's one-line answer, and any bytes that came after it."""
    received = b""
    while b"\n" not in received:
        chunk = sock.recv(_CHUNK)
        if not chunk:
            raise ConnectionError("the resident closed before answering")
        received += chunk
    line, rest = received.split(b"\n", 1)
    answer = json.loads(line)
    if not isinstance(answer, dict):
        raise ValueError("the resident's answer is not an object")
    return answer, rest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pump(sock: socket.socket, first: bytes) -> int:
    """Copy both ways until the resident closes; 0 when the client ended the session (closed
    stdin), 1 when the resident went away first (the client then starts a server again)."""
    client_ended = threading.Event()

    def upstream() -> None:
        try:
            while chunk := os.read(0, _CHUNK):
                sock.sendall(chunk)
            client_ended.set()
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the resident is gone: the reading side sees it and ends the relay

    # A daemon: a read of stdin blocks until the client writes, and must not hold the exit.
    threading.Thread(target=upstream, name="relay-stdin", daemon=True).start()
    try:
        if first:
            _write_all(1, first)
        while chunk := sock.recv(_CHUNK):
            _write_all(1, chunk)
    except OSError:
        return 1
    return 0 if client_ended.is_set() else 1


def relayed(config: Config) -> int | None:
    """Serve this client through the data dir's resident: the exit code; None when no resident
    serves this configuration and the process must serve the client itself."""
    data_dir = config.postgres.data_dir
    if data_dir is None:
        return None
    path: Path = resident_socket_path(data_dir)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HELLO_WAIT_S)
        sock.connect(str(path))
        hello = {
            "key": serving_key(config),
            "tenant": config.stdio.tenant,
            "conversation": config.stdio.conversation,
        }
        sock.sendall(json.dumps(hello).encode() + b"\n")
        answer, first = _hello_answer(sock)
    except (OSError, ValueError):
        sock.close()
        return None
    if "refused" in answer:
        # The same line, and exit code, as a process refusing the same environment itself.
        print(f"configuration error: {answer['refused']}", file=sys.stderr, flush=True)
        sock.close()
        return 1
    if answer.get("serving") is not True:
        sock.close()
        return None
    sock.settimeout(None)
    logger.info(
        "stdio_relayed",
        extra={"resident": answer.get("pid"), "log": str(resident_log_path(data_dir))},
    )
    with sock:
        return _pump(sock, first)
