"""``python -m shared.storage.postgres.keeper DATA_DIR GRACE_S``: the embedded PostgreSQL held,
for every local process of a data dir at once, by a process of its own.

Clients end a stdio server soon and hard: Claude Code sends SIGINT, SIGTERM 0.1 s later and
SIGKILL 0.4 s after that; the MCP Python SDK kills the server's whole process group. And they
start it again often: a new window, a reconnect. Starting PostgreSQL on every spawn is time a
client waits for its first answer; stopping it from a process that may be killed in the middle
of the stop leaves a PostgreSQL that nobody stops.

So one keeper per data dir holds the server. A process using it (``embedded.embedded_database``)
connects to the keeper's Unix socket, says its grace (one line, ``{"grace_s": N}``), reads the
server's URL and keeps the connection open for as long as it uses the server; the connection's
end, by a clean exit or by the kernel closing a killed process's descriptors, is its leaving.
When the last one has left, the keeper waits that one's grace for another, then stops serving,
releases the server and exits; ``GRACE_S`` is how long it waits for its first user. A process
that finds no keeper starts one in a session of its own (a signal to the client's group cannot
reach it).

Only one keeper serves a data dir: the winner holds an exclusive lock on ``keeper.lock`` in the
data dir for its whole life. A keeper started while another serves answers that it joined and
exits; one started while the previous keeper is still releasing the server waits for the lock.
A keeper whose server dies stops serving at once, so the next process starts a new server.

On stdout the keeper answers its starter one JSON line: ``{"ready": true}`` once it serves,
``{"joined": true}`` when another keeper serves, or ``{"error": ...}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import math
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import IO, Final

from shared.errors import StorageUnavailableError
from shared.process.logs import configure_logging
from shared.storage.postgres.embedded import (
    acquire_server,
    keeper_lock_path,
    keeper_socket_path,
    release_server,
)
from shared.storage.postgres.embedded_watch import server_alive

logger = logging.getLogger(__name__)

# How long a keeper waits for the process that started it to connect, whatever the grace: the
# starter connects as soon as it reads the answer, unless it was killed meanwhile.
FIRST_USER_WAIT_S: Final = 10.0
# How long a keeper waits for the lock while another keeper neither serves nor has exited
# (a first start running initdb on a slow disk).
ELECTION_WAIT_S: Final = 120.0
_POLL_S: Final = 0.05
_SERVER_CHECK_S: Final = 1.0


def _answer(message: dict[str, object]) -> None:
    """Answer the starter its one line, then let go of its pipe."""
    with contextlib.suppress(OSError):
        os.write(sys.stdout.fileno(), json.dumps(message).encode() + b"\n")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def _serving(socket_path: Path) -> bool:
    """Whether a keeper accepts connections on ``socket_path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(socket_path))
        except OSError:
            return False
    return True


def _elected(data_dir: Path) -> IO[bytes] | None:
    """The lock that makes this process the data dir's keeper, or None when another keeper
    serves it.

    Raises:
        StorageUnavailableError: the lock file cannot be opened, or the lock did not come free.
    """
    try:
        keeper_lock_path(data_dir).parent.mkdir(parents=True, exist_ok=True)
        lock = keeper_lock_path(data_dir).open("ab")
    except OSError as error:
        raise StorageUnavailableError(
            f"embedded postgres at {data_dir} could not start: {error}"
        ) from error
    deadline = time.monotonic() + ELECTION_WAIT_S
    while True:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if _serving(keeper_socket_path(data_dir)):
                lock.close()
                return None
            if time.monotonic() > deadline:
                lock.close()
                raise StorageUnavailableError(
                    f"embedded postgres at {data_dir}: another keeper holds "
                    f"{keeper_lock_path(data_dir)} and does not serve"
                ) from None
            time.sleep(_POLL_S)
            continue
        return lock


class Keeper:
    """The serving half: counts the processes connected, and ends once none has been for the
    grace period, or once the server has died. The server is released on the way out."""

    def __init__(self, data_dir: Path, url: str, *, grace_s: float) -> None:
        self._data_dir = data_dir
        self._url = url
        self._grace_s = grace_s
        self._users = 0
        self._served = False  # until a first user came, the starter has FIRST_USER_WAIT_S
        self._changed = asyncio.Event()
        self._done = asyncio.Event()
        # With no grace, the last user's connection stays open until the server is released:
        # a process given the time to exit then leaves no server running.
        self._leaving: list[asyncio.StreamWriter] = []

    async def serve(self) -> None:
        path = keeper_socket_path(self._data_dir)
        server: asyncio.Server | None = None
        try:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # a socket left by a keeper that was killed; the lock is ours
            server = await asyncio.start_unix_server(self._hold, path=str(path))
            loop = asyncio.get_running_loop()
            for stop_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.add_signal_handler(stop_signal, self._done.set)
            _answer({"ready": True})
            watch = asyncio.create_task(self._watch_server())
            await self._until_unused()
            watch.cancel()
        finally:
            self._done.set()
            if server is not None:
                server.close()  # no new user from here on
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            await asyncio.to_thread(release_server, self._data_dir)
            for writer in self._leaving:
                writer.close()

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hello = await reader.readline()
        except OSError:
            hello = b""
        if not hello or self._done.is_set() or not server_alive(self._data_dir):
            # A probe (another keeper asking whether this one serves) is no user, and one
            # turned away sees no URL and starts over with a new keeper.
            writer.close()
            return
        self._users += 1
        self._served = True
        self._changed.set()
        for parked in self._leaving:
            parked.close()  # the server stays: nobody needs to wait for its release
        self._leaving.clear()
        grace_s = _users_grace(hello, default=self._grace_s)
        try:
            writer.write(json.dumps({"url": self._url}).encode() + b"\n")
            await writer.drain()
            await reader.read()  # the user writes nothing more: this returns once it has left
        except OSError:
            pass
        finally:
            self._users -= 1
            if self._users == 0:
                self._grace_s = grace_s  # the last to leave says how long to wait for another
            self._changed.set()
            if self._users == 0 and grace_s <= 0:
                self._leaving.append(writer)
            else:
                writer.close()

    async def _until_unused(self) -> None:
        while not self._done.is_set():
            self._changed.clear()
            if self._users > 0:
                await self._next_change()
                continue
            # The grace of the last user to leave, read now: it changes as users come and go.
            wait_s = self._grace_s if self._served else max(self._grace_s, FIRST_USER_WAIT_S)
            try:
                await asyncio.wait_for(self._next_change(), timeout=wait_s)
            except TimeoutError:
                logger.info("embedded_postgres_unused", extra={"grace_s": self._grace_s})
                return

    async def _next_change(self) -> None:
        """Wait for a user to come or go, or for the end, whichever comes first."""
        done = asyncio.ensure_future(self._done.wait())
        changed = asyncio.ensure_future(self._changed.wait())
        try:
            await asyncio.wait({done, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            done.cancel()
            changed.cancel()

    async def _watch_server(self) -> None:
        # Polled: the postmaster is another process, and nothing signals this one when it dies.
        while server_alive(self._data_dir):  # noqa: ASYNC110
            await asyncio.sleep(_SERVER_CHECK_S)
        logger.error("embedded_postgres_died", extra={"data_dir": str(self._data_dir)})
        self._done.set()


def _users_grace(line: bytes, *, default: float) -> float:
    """The grace a user asked for on connecting (``{"grace_s": N}``), or ``default``."""
    try:
        grace = float(json.loads(line)["grace_s"])
    except (ValueError, TypeError, KeyError):
        return default
    return grace if math.isfinite(grace) and grace >= 0 else default


def keep(data_dir: Path, *, grace_s: float) -> int:
    """Serve the server in ``data_dir`` until it has been unused for ``grace_s``; the exit
    code."""
    try:
        lock = _elected(data_dir)
        if lock is None:
            _answer({"joined": True})
            return 0
        url = acquire_server(data_dir)
    except StorageUnavailableError as error:
        _answer({"error": str(error)})
        return 1
    with lock:  # held until the server is released: the next keeper waits for it
        asyncio.run(Keeper(data_dir, url, grace_s=grace_s).serve())
    return 0


def main() -> None:
    # The starter waits for the process it started, which leaves at once: the keeper goes on
    # in a child nobody needs to reap but init, and answers on the inherited stdout.
    if os.fork() > 0:
        os._exit(0)
    # stdout carries the answer alone; log lines go to stderr, which is the starter's. The
    # keeper outlives its starter, whose stderr may be closed by then: a lost line is no error.
    configure_logging(stdout_is_protocol=True)
    logging.raiseExceptions = False
    sys.exit(keep(Path(sys.argv[1]), grace_s=float(sys.argv[2])))


if __name__ == "__main__":
    main()
