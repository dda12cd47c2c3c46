"""``python -m shared.storage.postgres.keeper DATA_DIR``: the embedded PostgreSQL held for one
owner process by a process of its own, which the owner's death cannot cut short.

Clients end a stdio server soon and hard: Claude Code sends SIGINT, SIGTERM 0.1 s later and
SIGKILL 0.4 s after that; the MCP Python SDK kills the server's whole process group. Starting the
server (initdb, ``pg_ctl start``) takes seconds, and an owner killed while it starts or stops the
server leaves a PostgreSQL that nobody stops: ``pg_ctl`` daemonizes it, and the owner's pid had not
reached pgserver's list of users yet (or stays there, dead, until some later start drops it).

So the owner (``embedded.embedded_database``) starts this keeper in a session of its own and holds
the only writing end of its stdin. The keeper acquires the server, answers one JSON line on stdout
(``{"url": ...}`` or ``{"error": ...}``), reads stdin to its end, and releases the server. The end
comes when the owner closes its side or dies in any way (the kernel closes a dead process's
descriptors). Acquiring and releasing are one sequence in one process: an owner that leaves while
the server starts gets the release right after the start, never a race with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

from shared.errors import StorageUnavailableError
from shared.process.logs import configure_logging
from shared.storage.postgres.embedded import acquire_server, release_server


def _answer(message: dict[str, str]) -> None:
    # Unbuffered: an owner already gone fails this write here (EPIPE), not at interpreter exit.
    os.write(sys.stdout.fileno(), json.dumps(message).encode() + b"\n")


def keep(data_dir: Path) -> int:
    """Hold the server in ``data_dir`` until stdin ends; the exit code."""
    try:
        url = acquire_server(data_dir)
    except StorageUnavailableError as error:
        with contextlib.suppress(OSError):
            _answer({"error": str(error)})
        return 1
    try:
        _answer({"url": url})
        sys.stdin.buffer.read()  # the owner never writes: this returns once it has left
    except OSError:
        pass  # the owner left before the answer: the server is released all the same
    finally:
        release_server(data_dir)
    return 0


def main() -> None:
    # stdout carries the answer alone; log lines go to stderr, which is the owner's.
    configure_logging(stdout_is_protocol=True)
    sys.exit(keep(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
