"""The embedded default: a real PostgreSQL with pgvector, carried by the ``pgserver`` wheel.

``--local`` starts (or joins) a server whose data lives in ``<data_dir>/postgres`` and listens
only on a Unix socket; the backend then uses it through the same code as any other PostgreSQL.

Several processes may share one data dir (the API and the compactor both run ``--local``).
pgserver keeps the pids of its users in ``.handle_pids.json`` inside the data dir, under an
inter-process file lock, and the process that removes the last pid stops the server. Three things
are added here:

* a process that died without running its exit hooks (SIGKILL, OOM) leaves its pid behind, and
  the server would then never stop; dead pids are dropped before joining and before leaving;
* within one process, users are counted, so the server is joined once and left (stopping it
  when no other live process uses it) when the last user closes, not only at interpreter exit;
* the local processes (``embedded_database``) hold it through the data dir's one keeper, which
  they reach through ``keeper.sock`` and which stops the server after the last one's grace,
  even when that one was killed while the server was still starting (``keeper``).

pgserver blocks on subprocesses (initdb, pg_ctl): ``acquire_server`` and ``release_server``
block, and run in the keeper, off any event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import IO, Any, Final

from shared.errors import StorageUnavailableError

logger = logging.getLogger(__name__)

PGDATA_DIRNAME: Final = "postgres"
KEEPER_MODULE: Final = "shared.storage.postgres.keeper"
KEEPER_LOCK_FILENAME: Final = "keeper.lock"
KEEPER_SOCKET_FILENAME: Final = "keeper.sock"
KEEPER_LOG_FILENAME: Final = "keeper.log"
# How long a process waits for a keeper to serve: a first start runs initdb.
KEEPER_START_TIMEOUT_S: Final = 180.0
_SOCKET_PATH_MAX: Final = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
_PIDS_FILENAME: Final = ".handle_pids.json"  # pgserver's list of processes using the server
# The server's own log never carries what a caller sent: no statement text with an error (the
# default logs it), no bind parameters, no statement logging. Memory content and queries must not
# land in <data_dir>/postgres/log any more than in the process's own logs.
QUIET_LOG_SETTINGS: Final = {
    "log_min_error_statement": "panic",
    "log_statement": "none",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
}


class _Handle:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.users = 0


_HANDLES: dict[Path, _Handle] = {}
_HANDLES_LOCK = threading.Lock()


def pgdata_path(data_dir: Path) -> Path:
    """Where the embedded server keeps its files inside the data dir."""
    return (data_dir.expanduser() / PGDATA_DIRNAME).resolve()


def _import_pgserver() -> ModuleType:
    cached = sys.modules.get("pgserver")
    if cached is not None:
        return cached
    # Not thread-safe (catch_warnings swaps global filters): the async entry point imports it
    # on the event loop thread before handing the blocking work to a worker thread.
    with warnings.catch_warnings():
        # platformdirs warns at import time when XDG_RUNTIME_DIR is unset (containers, CI);
        # pgserver then keeps its lock file under /tmp/runtime-<uid>, which is fine.
        warnings.simplefilter("ignore")
        import pgserver
    return pgserver


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _forget_dead_users(pgdata: Path) -> None:
    path = pgdata / _PIDS_FILENAME
    if not path.exists():
        return
    try:
        pids = [int(pid) for pid in json.loads(path.read_text())]
    except (ValueError, TypeError):
        pids = []  # unreadable: treat as "nobody", so this process may stop the server
    alive = [pid for pid in pids if _pid_alive(pid)]
    if alive != pids:
        logger.info("embedded_postgres_dead_users_dropped", extra={"count": len(pids) - len(alive)})
        path.write_text(json.dumps(alive))


def _start(pgdata: Path, pgserver: ModuleType) -> Any:
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # The lock pgserver itself takes around its pid list; it is not re-entrant, so it is held
    # only for the pruning and released before get_server takes it again.
    with pgserver.PostgresServer._lock:
        if pgdata.exists():
            _forget_dead_users(pgdata)
    return pgserver.get_server(pgdata, cleanup_mode="stop")


def _quiet_log(server: Any) -> None:
    """Apply QUIET_LOG_SETTINGS (persisted by ALTER SYSTEM, so every later start has them)."""
    statements = [
        f"ALTER SYSTEM SET {name} = '{value}';" for name, value in QUIET_LOG_SETTINGS.items()
    ]
    server.psql(" ".join([*statements, "SELECT pg_reload_conf();"]))


def acquire_server(data_dir: Path) -> str:
    """Start or join the embedded server in ``data_dir``; its connection URL (a Unix socket).

    Blocking. Every call must be paired with :func:`release_server`.

    Raises:
        StorageUnavailableError: the server could not be initialised or started.
    """
    pgdata = pgdata_path(data_dir)
    pgserver = _import_pgserver()
    with _HANDLES_LOCK:
        handle = _HANDLES.get(pgdata)
        if handle is None:
            started = time.monotonic()
            try:
                server = _start(pgdata, pgserver)
            except (OSError, subprocess.SubprocessError, RuntimeError, AssertionError) as error:
                log = pgdata / "log"
                where = f"; its log is {log}" if log.is_file() else ""
                raise StorageUnavailableError(
                    f"embedded postgres at {data_dir} could not start: {error or type(error)}"
                    + where
                ) from error
            _quiet_log(server)
            handle = _HANDLES[pgdata] = _Handle(server)
            logger.info(
                "embedded_postgres_ready",
                extra={
                    "data_dir": str(data_dir),
                    "ms": round((time.monotonic() - started) * 1000),
                },
            )
        handle.users += 1
        return str(handle.server.get_uri())


def release_server(data_dir: Path) -> None:
    """Leave the server; the last user of the last live process stops it. Blocking."""
    pgdata = pgdata_path(data_dir)
    pgserver = _import_pgserver()
    with _HANDLES_LOCK:
        handle = _HANDLES.get(pgdata)
        if handle is None:
            return
        handle.users -= 1
        if handle.users > 0:
            return
        del _HANDLES[pgdata]
        with pgserver.PostgresServer._lock:
            _forget_dead_users(pgdata)
        # Removes this pid from the shared list and stops the server if it was the last one.
        handle.server.cleanup()
        # When another process still uses it, pgserver keeps this process's instance cached;
        # drop it so a later acquire registers this pid again instead of reusing a stale handle.
        pgserver.PostgresServer._instances.pop(pgdata, None)


def keeper_lock_path(data_dir: Path) -> Path:
    """The lock the data dir's one keeper holds (``keeper``)."""
    return data_dir.expanduser().resolve() / KEEPER_LOCK_FILENAME


def keeper_log_path(data_dir: Path) -> Path:
    """Where the data dir's keeper writes its log lines."""
    return data_dir.expanduser().resolve() / KEEPER_LOG_FILENAME


def keeper_socket_path(data_dir: Path) -> Path:
    """Where the data dir's keeper listens: in the data dir, or, when that path is too long
    for a Unix socket, in the temporary folder under a name drawn from the data dir's."""
    folder = data_dir.expanduser().resolve()
    path = folder / KEEPER_SOCKET_FILENAME
    if len(os.fsencode(path)) <= _SOCKET_PATH_MAX:
        return path
    digest = hashlib.sha256(os.fsencode(folder)).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"mcp-memory-keeper-{digest}.sock"


async def _joined(
    data_dir: Path, grace_s: float
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str] | None:
    """A connection to the data dir's keeper and the server's URL; None when no keeper serves
    (or the one found was ending)."""
    try:
        reader, writer = await asyncio.open_unix_connection(str(keeper_socket_path(data_dir)))
    except OSError:
        return None
    try:
        writer.write(json.dumps({"grace_s": grace_s}).encode() + b"\n")
        answer = json.loads(await reader.readline() or b"{}")
    except (OSError, ValueError):
        answer = {}
    if "url" not in answer:
        writer.close()
        return None
    return reader, writer, str(answer["url"])


def _start_keeper(data_dir: Path, grace_s: float) -> None:
    """Start a keeper for ``data_dir`` and wait for its answer (it serves, or another does).
    Blocking: run in a worker thread, which finishes even when the caller is cancelled, so a
    process leaving during the start still waits for the keeper's answer if given the time.

    Raises:
        StorageUnavailableError: the keeper could not start the server.
    """
    # Not the starter's stderr: the keeper outlives it, and a client reading that stream to its
    # end would wait for the keeper too. Its few lines go to the data dir.
    try:
        log: IO[bytes] | None = keeper_log_path(data_dir).open("ab")
    except OSError:
        log = None
    try:
        keeper = subprocess.Popen(
            # -P: not the working directory's modules (a folder named `shared` there is not ours)
            [sys.executable, "-P", "-m", KEEPER_MODULE, str(data_dir), str(grace_s)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log if log is not None else subprocess.DEVNULL,
            # A session of its own: a signal to this process's group (a terminal's Ctrl-C, an
            # SDK killing the group) must not end the keeper every local process relies on.
            start_new_session=True,
        )
    finally:
        if log is not None:
            log.close()
    assert keeper.stdout is not None  # PIPE
    # The keeper answers one line; the process started has already left it to a child.
    with keeper.stdout:
        line = keeper.stdout.readline()
    keeper.wait()
    answer = json.loads(line or b"{}")
    if "error" in answer:
        raise StorageUnavailableError(str(answer["error"]))
    if not answer:
        raise StorageUnavailableError(f"the keeper of embedded postgres at {data_dir} exited")


# The keepers this process started ahead of its first join (``start_early``), by the data dir
# as the configuration gives it (both calls are handed the same one).
_EARLY_STARTS: dict[Path, concurrent.futures.Future[None]] = {}


def start_early(data_dir: Path, *, grace_s: float) -> None:
    """Start the data dir's keeper on a thread of its own when none serves yet, so that the
    server starts while this process still imports and opens the rest of itself (a client
    waits for both before its first answer); ``embedded_database`` then joins it. A keeper
    nobody joins stops the server after its first user's wait."""
    if data_dir in _EARLY_STARTS or keeper_socket_path(data_dir).exists():
        return  # started already, or a keeper probably serves: joining finds out
    started: concurrent.futures.Future[None] = concurrent.futures.Future()

    def start() -> None:
        try:
            _start_keeper(data_dir, grace_s)
        except (StorageUnavailableError, OSError, ValueError) as error:
            started.set_exception(error)  # the join starts one itself and says why
        else:
            started.set_result(None)

    _EARLY_STARTS[data_dir] = started
    threading.Thread(target=start, name="keeper-start", daemon=True).start()


@contextlib.asynccontextmanager
async def embedded_database(
    data_dir: Path, *, grace_s: float = 0.0, start: bool = True
) -> AsyncIterator[str]:
    """The embedded server's URL for the duration of the block, held through the data dir's
    keeper (``shared.storage.postgres.keeper``), started here when none serves (unless not
    ``start``). When this process is the last to leave (even killed by SIGKILL), the keeper
    stops the server ``grace_s`` later unless another process has come by then.

    Raises:
        StorageUnavailableError: the server could not be initialised or started, or, not to
            ``start``, no keeper serves it.
    """
    joining = asyncio.ensure_future(_join(data_dir, grace_s, start=start))
    try:
        reader, writer, url = await asyncio.shield(joining)
    except asyncio.CancelledError:
        # Left during the start (a client that only asked for the tool list): the start is
        # finished and joined all the same, then left at once, so the keeper applies this
        # process's grace rather than waiting for a user that never comes.
        with contextlib.suppress(Exception):
            await _leave(*(await joining)[:2])
        raise
    try:
        yield url
    finally:
        await _leave(reader, writer)


async def _join(
    data_dir: Path, grace_s: float, *, start: bool
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, str]:
    deadline = time.monotonic() + KEEPER_START_TIMEOUT_S
    while (joined := await _joined(data_dir, grace_s)) is None:
        early = _EARLY_STARTS.pop(data_dir, None)
        if early is not None:
            # Wait for the start under way rather than race it with a second keeper; if it
            # failed, the next round starts one and says why.
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(early)
            continue
        if not start:
            raise StorageUnavailableError(
                f"embedded postgres at {data_dir}: no keeper serves it, and this process only "
                "joins a running one"
            )
        if time.monotonic() > deadline:
            raise StorageUnavailableError(
                f"embedded postgres at {data_dir}: no keeper served it within "
                f"{KEEPER_START_TIMEOUT_S:.0f} s"
            )
        await asyncio.to_thread(_start_keeper, data_dir, grace_s)
    return joined


async def _leave(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Leave the keeper: close our half. With no grace the keeper closes its half once the
    server is released, so a process given the time to exit leaves no server running."""
    with contextlib.suppress(OSError):
        writer.write_eof()
    with contextlib.suppress(OSError):
        await asyncio.shield(reader.read())
    writer.close()


def describe(data_dir: Path) -> str:
    return f"embedded postgres at {data_dir}"
