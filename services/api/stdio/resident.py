"""The data dir's resident (``services.api.stdio.sharing``): one process that holds the runtime
open and serves the stdio servers relaying to it, each as its own MCP session with its own
tenant and conversation, until none has been connected for the grace period.

``python -P -m services.api.stdio.resident DATA_DIR``, started by a stdio server on its way out
with that server's environment. It takes the data dir's resident lock and binds its socket
before importing anything heavy, so a relay connecting meanwhile waits in the socket's backlog
rather than serving itself. It stops early on SIGTERM or SIGINT, when the embedded database
dies, or when its socket is removed (the data dir deleted); a relay then sees its connection end
and exits 1, and the client starts a server again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import msgspec

from services.api.stdio.sharing import (
    resident_lock_path,
    resident_socket_path,
    serving_key,
    shares_a_resident,
    with_stdio_grace,
)
from shared.config import Config, StdioSettings, load_config
from shared.errors import ConfigError
from shared.process.allocator import tune_allocator
from shared.process.logs import configure_logging

if TYPE_CHECKING:
    from services.api.tools.definition import ToolContext, ToolSpec

logger = logging.getLogger(__name__)

# A relay sends its hello as soon as it connects; a connection silent this long is not one.
HELLO_READ_S: Final = 10.0
_CHECK_S: Final = 0.5
_HELLO_MAX: Final = 65536


def _elected(data_dir: Path) -> IO[bytes] | None:
    """The lock that makes this process the data dir's resident; None when another holds it."""
    try:
        lock = resident_lock_path(data_dir).open("ab")
    except OSError:
        return None
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return None
    # Who holds it, for what stops the resident (``stop_resident``).
    lock.truncate(0)
    lock.write(str(os.getpid()).encode())
    lock.flush()
    return lock


def _listening(path: Path) -> socket.socket:
    """The resident's socket, bound at ``path`` (a file left there by a resident that died is
    replaced: the lock says none serves it)."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    # Whoever connects is served any tenant's memories: this user's processes only.
    os.chmod(path, 0o600)
    listener.listen(64)
    listener.settimeout(0.0)  # non-blocking, for the event loop
    return listener


class Resident:
    """Serves relays' sessions over ``listener`` while the runtime is open (or opening)."""

    def __init__(self, config: Config, listener: socket.socket, *, path: Path) -> None:
        self._key = serving_key(config)
        self._idle_s = config.postgres.embedded_grace_s or 0.0
        # The resident waits out the grace itself; the database then stops when it leaves. It
        # joins the database that is running and never starts one: a keeper asked to stop
        # between the check in ``serve`` and the runtime's opening must not be undone.
        postgres = msgspec.structs.replace(
            config.postgres, embedded_grace_s=0.0, embedded_start=False
        )
        self._config = msgspec.structs.replace(config, postgres=postgres)
        self._listener = listener
        self._path = path
        self._inode = path.stat().st_ino
        self._connections: set[socket.socket] = set()
        self._sessions: set[asyncio.Task[None]] = set()
        self._last_left = time.monotonic()
        self._catalogue: tuple[ToolSpec, ...] = ()

    def _answer(self, hello: Any) -> tuple[dict[str, object], ToolContext | None]:
        from services.api.stdio.transport import stdio_context

        if not isinstance(hello, dict) or hello.get("key") != self._key:
            return {"mismatch": True}, None
        tenant, conversation = hello.get("tenant"), hello.get("conversation")
        if not all(value is None or isinstance(value, str) for value in (tenant, conversation)):
            return {"mismatch": True}, None
        try:
            context = stdio_context(StdioSettings(tenant=tenant, conversation=conversation))
        except ConfigError as error:
            return {"refused": str(error)}, None
        return {"serving": True, "pid": os.getpid()}, context

    async def _hello(self, conn: socket.socket) -> Any:
        loop = asyncio.get_running_loop()
        received = b""
        while b"\n" not in received and len(received) < _HELLO_MAX:
            chunk = await loop.sock_recv(conn, _HELLO_MAX)
            if not chunk:
                raise ConnectionError("the relay left before its hello")
            received += chunk
        return json.loads(received.split(b"\n", 1)[0])

    async def _session(self, conn: socket.socket) -> None:
        from services.api.stdio.transport import StdioEndpoint

        loop = asyncio.get_running_loop()
        started = time.monotonic()
        served = False
        try:
            hello = await asyncio.wait_for(self._hello(conn), HELLO_READ_S)
            answer, context = self._answer(hello)
            await loop.sock_sendall(conn, json.dumps(answer).encode() + b"\n")
            if context is None:
                return
            served = True
            logger.info("resident_session_started", extra={"tenant": context.tenant})
            conn.settimeout(None)  # blocking: the SDK reads it on a worker thread
            await StdioEndpoint(self._catalogue, context=context).serve_socket(conn)
        except (TimeoutError, OSError, ValueError) as error:
            logger.info("resident_session_refused", extra={"reason": type(error).__name__})
        except Exception as error:  # noqa: BLE001 - one session's failure ends that session only
            # The type alone: a message may quote a memory.
            logger.error("resident_session_failed", extra={"error": type(error).__name__})
        finally:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
            self._connections.discard(conn)
            if served:  # only a session served keeps the resident for another grace
                self._last_left = time.monotonic()
                ms = round((time.monotonic() - started) * 1000)
                logger.info("resident_session_ended", extra={"ms": ms})

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            conn, _ = await loop.sock_accept(self._listener)
            self._connections.add(conn)
            task = asyncio.create_task(self._session(conn))
            self._sessions.add(task)
            task.add_done_callback(self._sessions.discard)

    def _socket_is_ours(self) -> bool:
        try:
            return self._path.stat().st_ino == self._inode
        except OSError:
            return False

    async def _until_idle(self) -> None:
        """Until no relay has been connected for the grace period, or the socket is gone."""
        while self._socket_is_ours():
            idle = not self._connections and time.monotonic() - self._last_left >= self._idle_s
            if idle:
                return
            await asyncio.sleep(_CHECK_S)

    async def serve(self) -> int:
        """Serve until idle or stopped; the exit code (1 when the database died or the runtime
        could not open)."""
        from services.api.runtime import open_runtime

        # The MCP SDK, imported before the first relay's hello waits on it.
        from services.api.stdio import transport  # noqa: F401
        from services.api.stdio.deferred import (
            BackgroundRuntime,
            tool_definitions,
            waiting_catalogue,
        )
        from shared.storage.factory import embedded_server_running, watch_embedded_server

        # A resident keeps a running stack warm; it never starts a database that was stopped
        # meanwhile (a keeper asked to stop, a machine shutting down).
        if not embedded_server_running(self._config):
            logger.info("resident_not_needed")
            return 0
        stopping = asyncio.Event()
        embedded_died = watch_embedded_server(self._config, stopping)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.set)

        def failed(line: str) -> None:
            print(line, file=sys.stderr, flush=True)
            stopping.set()  # the next client starts a server of its own, which says why

        runtime = BackgroundRuntime(
            self._config, open_runtime, on_open=lambda _: None, on_failure=failed
        )
        self._catalogue = waiting_catalogue(tool_definitions(self._config), runtime.ready)
        runtime.start()
        logger.info("resident_started", extra={"idleS": self._idle_s})
        waits = {
            asyncio.create_task(self._accept()),
            asyncio.create_task(self._until_idle()),
            asyncio.create_task(stopping.wait()),
        }
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in waits:
            task.cancel()
        self._listener.close()
        if self._socket_is_ours():
            self._path.unlink()
        for conn in list(self._connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # ends each session's read of its relay
        if self._sessions:
            await asyncio.wait(self._sessions, timeout=5.0)
        server_died = embedded_died()
        await runtime.close()
        logger.info("resident_stopped")
        return 1 if server_died or runtime.failed else 0


def main() -> None:
    """Entry point (see the module docstring)."""
    configure_logging()
    data_dir = Path(sys.argv[1])
    try:
        config = with_stdio_grace(load_config(os.environ, local=True, data_dir=data_dir))
    except ConfigError as error:
        logger.error("resident_config_error", extra={"error": str(error)})
        sys.exit(1)
    if not shares_a_resident(config):
        sys.exit(0)
    lock = _elected(data_dir)
    if lock is None:
        sys.exit(0)  # another resident serves this data dir
    tune_allocator(os.environ)
    path = resident_socket_path(data_dir)
    try:
        listener = _listening(path)
    except OSError as error:
        logger.error("resident_listen_failed", extra={"error": str(error)})
        sys.exit(1)
    code = asyncio.run(Resident(config, listener, path=path).serve())
    logging.shutdown()
    # A session's reading thread may still block on its socket; nothing is left to flush.
    os._exit(code)


if __name__ == "__main__":
    main()
