"""What a stdio server and the data dir's resident agree on, kept free of the MCP SDK so a
relay can read it in milliseconds: where the resident listens, which configuration it serves,
how long the data dir's local stack outlives its last client, and how a resident is started.

A desktop client respawns its stdio server often, and several run at once (one per editor
window). Importing the SDK and opening the model cost each new process most of a second, so
once a stdio server has served its client and leaves, it starts a **resident** for the data dir:
one process that keeps the runtime open for the grace period and serves each later stdio server
of the same configuration through a Unix socket, while those only relay their stdin and stdout
(``services.api.stdio.relay``, ``services.api.stdio.resident``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Final

import msgspec

from shared.config import Config, StdioSettings
from shared.process.version import installed_version

RESIDENT_MODULE: Final = "services.api.stdio.resident"
RESIDENT_SOCKET_FILENAME: Final = "stdio.sock"
RESIDENT_LOCK_FILENAME: Final = "stdio.lock"
RESIDENT_LOG_FILENAME: Final = "stdio.log"
# How long the embedded database outlives a stdio server when PG_EMBEDDED_GRACE_S is unset: a
# desktop client respawns its server often, and a respawn within the grace finds it running.
STDIO_EMBEDDED_GRACE_S: Final = 300.0
RESIDENT_LOG_MAX_BYTES: Final = 10 * 1024 * 1024
_SOCKET_PATH_MAX: Final = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def with_stdio_grace(config: Config) -> Config:
    """The configuration a stdio server runs with: unless ``PG_EMBEDDED_GRACE_S`` is set, the
    embedded database outlives it by ``STDIO_EMBEDDED_GRACE_S``. Every other process stops the
    database on leaving unless told otherwise."""
    if config.postgres.embedded_grace_s is not None:
        return config
    postgres = msgspec.structs.replace(config.postgres, embedded_grace_s=STDIO_EMBEDDED_GRACE_S)
    return msgspec.structs.replace(config, postgres=postgres)


def shares_a_resident(config: Config) -> bool:
    """Whether stdio servers of this configuration use a resident: only on the embedded
    database (one person's data dir), and only with a grace to keep it for."""
    grace = config.postgres.embedded_grace_s
    return config.backend == "embedded" and config.postgres.data_dir is not None and bool(grace)


def serving_key(config: Config) -> str:
    """What must be equal for a resident to serve a stdio server: every setting but who the
    calls are from (each relay says that itself), and the installed version."""
    data_dir = config.postgres.data_dir
    postgres = msgspec.structs.replace(
        config.postgres, data_dir=_folder(data_dir) if data_dir is not None else None
    )
    served = msgspec.structs.replace(config, stdio=StdioSettings(), postgres=postgres)
    digest = hashlib.sha256(msgspec.json.encode(served, enc_hook=str))
    digest.update(installed_version().encode())
    return digest.hexdigest()


def _folder(data_dir: Path) -> Path:
    return data_dir.expanduser().resolve()


def resident_socket_path(data_dir: Path) -> Path:
    """Where the data dir's resident listens: in the data dir, or, when that path is too long
    for a Unix socket, in the temporary folder under a name drawn from the data dir's."""
    path = _folder(data_dir) / RESIDENT_SOCKET_FILENAME
    if len(os.fsencode(path)) <= _SOCKET_PATH_MAX:
        return path
    digest = hashlib.sha256(os.fsencode(_folder(data_dir))).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"mcp-memory-stdio-{digest}.sock"


def resident_lock_path(data_dir: Path) -> Path:
    """The lock the data dir's one resident holds."""
    return _folder(data_dir) / RESIDENT_LOCK_FILENAME


def resident_log_path(data_dir: Path) -> Path:
    """Where the resident writes its log lines (it outlives the client that started it)."""
    return _folder(data_dir) / RESIDENT_LOG_FILENAME


def start_resident(data_dir: Path) -> None:
    """Start a resident for ``data_dir`` in the background, with this process's environment
    (its configuration); it gives way at once if another already serves the data dir."""
    path = resident_log_path(data_dir)
    with contextlib.suppress(OSError):
        if path.stat().st_size > RESIDENT_LOG_MAX_BYTES:
            # A line a tool call: kept to two files' worth, the older one replaced.
            os.replace(path, path.with_name(path.name + ".1"))
    try:
        log: IO[bytes] | None = path.open("ab")
    except OSError:
        log = None
    try:
        subprocess.Popen(
            # -P: not the working directory's modules (a folder named `shared` there is not ours)
            [sys.executable, "-P", "-m", RESIDENT_MODULE, str(data_dir)],
            stdin=subprocess.DEVNULL,
            # Never the starter's streams: a client reads them to their end, and the resident
            # outlives the starter by the grace.
            stdout=log if log is not None else subprocess.DEVNULL,
            stderr=log if log is not None else subprocess.DEVNULL,
            # A session of its own: a signal to the client's process group must not end it.
            start_new_session=True,
        )
    except OSError:
        pass  # no resident only costs the next start its speed
    finally:
        if log is not None:
            log.close()


def _holder(data_dir: Path) -> int | None:
    """The pid of the resident holding the data dir's lock (0 while it has yet to write it);
    None when none holds it."""
    try:
        with resident_lock_path(data_dir).open("rb") as lock:
            try:
                fcntl.flock(lock.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                written = lock.read().strip()
                return int(written) if written.isdigit() else 0
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
            return None
    except OSError:
        return None


def stop_resident(data_dir: Path, *, timeout_s: float = 30.0) -> bool:
    """Stop the data dir's resident, if one runs, and wait for it to leave (its final counter
    flush, then the database's release); whether none runs now. Blocking."""
    deadline = time.monotonic() + timeout_s
    asked = False
    while (pid := _holder(data_dir)) is not None:
        if pid and not asked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            asked = True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
