"""The asyncpg pool, and the one place asyncpg exceptions become :mod:`shared.errors` classes.

Every query the PostgreSQL backend runs goes through a :class:`Session`, whose methods translate
driver errors (raised ``from`` the original) so that nothing above this module sees an asyncpg
type: an unreachable or overloaded server is :class:`StorageUnavailableError`, anything else the
server refuses is :class:`StorageError`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Final, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
import msgspec
from pgvector.asyncpg import register_vector

from shared.errors import StorageError, StorageFullError, StorageUnavailableError
from shared.storage.postgres.space import SpaceWatch

UNPARSEABLE_URL: Final = "<unparseable database URL>"
# What a caller may be told failed: both stores live in the one database.
STORE_NAME: Final = "PostgreSQL"
CONNECT_TIMEOUT_S: Final = 10.0
# A query that takes this long is a stuck server, not a slow scan (100k rows scan in ~0.1 s).
COMMAND_TIMEOUT_S: Final = 60.0
DEFAULT_POOL_MAX_SIZE: Final = 10
_SECRET_QUERY_KEYS: Final = frozenset({"password", "passfile", "sslpassword"})

# Connection-level failures: SQLSTATE classes 08 (connection), 53 (insufficient resources, such
# as too many connections) and 57 (operator intervention: shutdown, starting up).
_UNAVAILABLE_CLASSES: Final = ("08", "53", "57")
# disk_full: a write found no space (class 53, but the server is up and reads still work).
_DISK_FULL: Final = "53100"

T = TypeVar("T")


def redact_url(url: str) -> str:
    """The URL with any password (in the userinfo or the query string) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return UNPARSEABLE_URL
    netloc = parts.netloc
    if parts.password:
        user = parts.username or ""
        host = netloc.rpartition("@")[2]
        netloc = f"{user}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        redacted = [(k, "***" if k.lower() in _SECRET_QUERY_KEYS else v) for k, v in pairs]
        query = urlencode(redacted, safe="/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _cause(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno:
        # asyncio words a refused connection as "Connect call failed"; name the reason too.
        return f"{os.strerror(error.errno)} ({error})"
    return str(error) or type(error).__name__


def _is_unavailable(error: BaseException) -> bool:
    if isinstance(
        error, OSError | TimeoutError | asyncpg.InterfaceError | asyncpg.InternalClientError
    ):
        return True
    sqlstate = getattr(error, "sqlstate", None) or ""
    return isinstance(error, asyncpg.PostgresError) and sqlstate[:2] in _UNAVAILABLE_CLASSES


@contextlib.contextmanager
def translated(display_url: str, *, connecting: bool = False) -> Iterator[None]:
    """Re-raise driver errors as StorageUnavailableError or StorageError, ``from`` the original.

    Args:
        display_url: the database URL without its password, for the message.
        connecting: every failure while connecting (refused, bad password, no such database)
            means the store is unavailable, whatever its SQLSTATE.
    """
    try:
        yield
    except (
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        # What a pooled connection raises when the server died under it mid-protocol ("cannot
        # switch to state ...; another operation is in progress"): a lost store, like the rest.
        asyncpg.InternalClientError,
        OSError,
        TimeoutError,
    ) as error:
        if connecting:
            # At boot, for the operator: which database, without its password.
            raise StorageUnavailableError(
                f"cannot connect to PostgreSQL at {display_url}: {_cause(error)}"
            ) from error
        # On a call the message can reach a model as a tool error: no URL, host or port, and a
        # driver's own text only when it is the server's (a connection error names an address).
        cause = (
            _cause(error)
            if isinstance(error, asyncpg.PostgresError)
            else "the connection to the database failed or was lost"
        )
        if getattr(error, "sqlstate", None) == _DISK_FULL:
            # Class 53 like an overload, but no outage: reads go on, writes wait for space.
            raise StorageFullError(
                f"PostgreSQL has no space left on its disk: {cause}", store=STORE_NAME
            ) from error
        if _is_unavailable(error):
            raise StorageUnavailableError(
                f"PostgreSQL is unavailable: {cause}", store=STORE_NAME
            ) from error
        raise StorageError(f"PostgreSQL failed: {cause}", store=STORE_NAME) from error
    except ValueError as error:
        # asyncpg parses the DSN itself and raises ValueError on one it cannot read.
        if not connecting:
            raise
        raise StorageUnavailableError(
            f"cannot connect to PostgreSQL at {display_url}: {_cause(error)}"
        ) from error


# Failures after which the server may not have answered the statement it was sent.
_CUT_SHORT: Final = (TimeoutError, OSError, asyncpg.InterfaceError, asyncpg.InternalClientError)


def cut_short(error: BaseException) -> bool:
    """Whether ``error`` cut a statement short: a cancellation (a deadline), a timeout or a
    lost connection, raw or translated. The server may still be working on the statement, or
    be stalled; after any other error (the server's own answer, a refusal of ours) the
    connection is in a known state and may be reused."""
    if not isinstance(error, Exception):
        return True  # asyncio.CancelledError, KeyboardInterrupt
    return isinstance(error, _CUT_SHORT) or isinstance(error.__cause__, _CUT_SHORT)


def _discard(connection: asyncpg.Connection) -> None:
    """Close the connection's socket at once, waiting on nothing; a connection the pool took
    back already (it was closing) has nothing left to discard."""
    with contextlib.suppress(asyncpg.InterfaceError):
        connection.terminate()


@contextlib.asynccontextmanager
async def discarding(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    """A pooled connection, closed instead of released when its work was cut short.

    asyncpg's release waits for the server to acknowledge the cancellation of a statement cut
    short and then rolls back, shielded from the caller's own cancellation: with the server
    stalled (stopped, a full disk, a lock behind a hung client) a call past its deadline waited
    as long as the stall. Closing the socket waits on nothing; the server rolls back a
    connection that went away, and the pool opens a fresh one when it needs one.
    """
    connection = await pool.acquire()
    try:
        yield connection
    except BaseException as error:
        if cut_short(error):
            _discard(connection)  # then release returns at once: nothing left to return
        raise
    finally:
        await pool.release(connection)


class _Statements:
    """Statements on a pool or on one connection; every method translates driver errors."""

    def __init__(
        self,
        target: asyncpg.Pool | asyncpg.Connection,
        *,
        display_url: str,
        space: SpaceWatch | None = None,
    ) -> None:
        self._target = target
        self.display_url = display_url
        self.space = space if space is not None else SpaceWatch()

    @contextlib.contextmanager
    def _translated(self, sql: str = "") -> Iterator[None]:
        """``translated``, and what the statement tells of the disk (``SpaceWatch``)."""
        try:
            with translated(self.display_url):
                yield
        except StorageFullError as error:
            self.space.full = str(error)
            raise
        self.space.wrote(sql)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        """One connection for one statement: from the pool (``discarding``), or the session's
        own (its ``transaction`` and ``session`` discard it when cut short)."""
        if isinstance(self._target, asyncpg.Pool):
            async with discarding(self._target) as connection:
                yield connection
        else:
            yield self._target

    async def execute(self, sql: str, *args: object) -> str:
        with self._translated(sql):
            async with self._connection() as connection:
                status: str = await connection.execute(sql, *args)
        return status

    async def fetch(self, sql: str, *args: object) -> list[asyncpg.Record]:
        with self._translated(sql):
            async with self._connection() as connection:
                rows: list[asyncpg.Record] = await connection.fetch(sql, *args)
        return rows

    async def fetchval(self, sql: str, *args: object) -> Any:
        with self._translated(sql):
            async with self._connection() as connection:
                return await connection.fetchval(sql, *args)


class Session(_Statements):
    """One connection (``_target``), and transactions on it."""

    @contextlib.asynccontextmanager
    async def transaction(
        self, *, isolation: str | None = None, readonly: bool = False
    ) -> AsyncIterator[Session]:
        """BEGIN … COMMIT, rolled back when the body raises.

        Args:
            isolation: ``"repeatable_read"`` for several statements that must see one snapshot;
                None keeps the server's default (read committed).
            readonly: the body only reads.
        """
        with self._translated():
            tx = self._target.transaction(isolation=isolation, readonly=readonly)
            await tx.start()
        try:
            yield self
        except BaseException as error:
            if cut_short(error):
                # Cut short: a rollback would wait on a server that may be stalled. Closing
                # the connection rolls the transaction back on the server's side.
                _discard(self._target)
                raise
            with self._translated():
                await tx.rollback()
            raise
        with self._translated():
            await tx.commit()


async def _init_connection(connection: asyncpg.Connection) -> None:
    # Embeddings travel in pgvector's binary format (lists or numpy arrays, never text), and
    # metadata as JSON decoded by msgspec.
    await register_vector(connection)
    await connection.set_type_codec(
        "jsonb",
        schema="pg_catalog",
        encoder=lambda value: msgspec.json.encode(value).decode(),
        decoder=msgspec.json.decode,
        format="text",
    )


async def _keep_connection(connection: asyncpg.Connection) -> None:
    """Release a connection to the pool as it is, without asyncpg's default reset query.

    That query (``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``) is a round trip
    to the server on every release, i.e. on every pooled statement, and a recall makes one such
    statement while the model is embedding on the same cores. Our connections never carry session
    state for it to clear: no SET, LISTEN or cursor, and the schema's advisory lock is
    transaction-scoped. asyncpg still rolls back a transaction left open before calling this.
    """


class PostgresDatastore(_Statements):
    """The pool of one database, with the password-free URL its errors name."""

    def __init__(self, pool: asyncpg.Pool, *, display_url: str) -> None:
        super().__init__(pool, display_url=display_url)
        self._pool = pool

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        url: str,
        *,
        prepare: Callable[[Session], Awaitable[T]],
        pool_max_size: int = DEFAULT_POOL_MAX_SIZE,
    ) -> AsyncIterator[tuple[PostgresDatastore, T]]:
        """Connect once to run ``prepare`` (the schema), then open the pool; close it after.

        The pool opens only after ``prepare`` because each pooled connection registers the
        ``vector`` type, which exists only once the extension has been created.

        Raises:
            StorageUnavailableError: the database cannot be reached; names the URL, no password.
        """
        display_url = redact_url(url)
        with translated(display_url, connecting=True):
            connection = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT_S)
        try:
            prepared = await prepare(Session(connection, display_url=display_url))
        finally:
            with translated(display_url):
                await connection.close()
        with translated(display_url, connecting=True):
            pool = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=pool_max_size,
                init=_init_connection,
                reset=_keep_connection,
                timeout=CONNECT_TIMEOUT_S,
                command_timeout=COMMAND_TIMEOUT_S,
            )
        try:
            yield cls(pool, display_url=display_url), prepared
        finally:
            with translated(display_url):
                await pool.close()

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[Session]:
        """A pooled connection for several statements (a transaction, a bulk load)."""
        with translated(self.display_url):
            connection = await self._pool.acquire()
        try:
            yield Session(connection, display_url=self.display_url, space=self.space)
        except BaseException as error:
            if cut_short(error):
                _discard(connection)  # as ``discarding`` does: release waits on nothing
            raise
        finally:
            with translated(self.display_url):
                await self._pool.release(connection)
