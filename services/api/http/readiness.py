"""``GET /ready``: whether this process can reach its storage now, for a readiness probe.

Liveness (``/health``) stays cheap and unconditional: a process whose database is down is alive,
and restarting it does not bring the database back. Readiness takes it out of the Service's
endpoints instead, so callers are routed to pods that can answer. Every tool needs both stores,
so both are probed, at once, each bounded by ``READY_TIMEOUT_S`` (shorter than the tools'
storage deadline, so a stalled store is seen by the probe first): one key's etag in the state
store (a HeadObject on S3, a row lookup on PostgreSQL) and one id in the memory store (a
GetVectors on S3 Vectors, a row lookup on PostgreSQL). Neither is ever written, and the tenant
the memory probe names cannot be a caller's. The answer names which store failed, never where
it is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from shared.errors import (
    StorageError,
    StorageFullError,
    StorageTimeoutError,
    StorageUnavailableError,
)
from shared.storage import ObjectStore, VectorStore

logger = logging.getLogger(__name__)

READY_PATH: Final = "/ready"
READY_TIMEOUT_S: Final = 2.0
# Never written: reading a missing key still makes the store answer.
PROBE_KEY: Final = "ready/probe"
# A tenant no header can name (a tenant starts with a letter or a digit), and an id no memory has.
PROBE_TENANT: Final = "_ready"
PROBE_ID: Final = "probe"

ReadinessCheck = Callable[[], Awaitable[None]]
NO_SPACE: Final = "no space left on its disk: nothing can be written until space is freed"


async def _probe(store: str, read: Awaitable[object]) -> None:
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            await read
    except TimeoutError:
        raise StorageTimeoutError(
            f"{store} did not answer the readiness probe within {READY_TIMEOUT_S:g} s",
            store=store,
            operation="ready",
            timeout_s=READY_TIMEOUT_S,
        ) from None
    except StorageError as error:
        if error.store is None:
            raise StorageUnavailableError(str(error), store=store) from error
        raise


def storage_check(
    *, vectors: VectorStore, objects: ObjectStore, space: ReadinessCheck | None = None
) -> ReadinessCheck:
    """A check that probes both stores at once; raises StorageError naming the first that
    failed (the state store's first when both did). ``space``: the backend's word on whether
    a write may succeed (``Stores.space``), asked once both stores answered: a full disk still
    answers reads, and no write succeeds on it."""

    async def check() -> None:
        results = await asyncio.gather(
            _probe(objects.display_name, objects.etag(PROBE_KEY)),
            _probe(vectors.display_name, vectors.get(PROBE_TENANT, [PROBE_ID])),
            return_exceptions=True,
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result
        if space is not None:
            await space()

    return check


async def ready_response(check: ReadinessCheck) -> web.Response:
    try:
        # A backstop for checks without their own deadline; storage_check's are the same length.
        async with asyncio.timeout(READY_TIMEOUT_S + 0.5):
            await check()
    except TimeoutError:
        logger.warning("ready_check_failed", extra={"reason": "timeout"})
        return _unavailable(f"the memory store did not answer within {READY_TIMEOUT_S:g} s")
    except StorageError as error:
        # The message goes to the log (it may name a host or bucket); the prober reads the store.
        logger.warning(
            "ready_check_failed",
            exc_info=error,
            extra={"reason": type(error).__name__, "store": error.store},
        )
        store = error.store or "the memory store"
        if isinstance(error, StorageTimeoutError):
            return _unavailable(f"{store} did not answer within {error.timeout_s:g} s")
        if isinstance(error, StorageFullError):
            return _unavailable(f"{store} has {NO_SPACE}")
        return _unavailable(f"{store} could not be reached")
    return web.json_response({"status": "ready"})


def _unavailable(reason: str) -> web.Response:
    return web.json_response(
        {"status": "unavailable", "reason": reason}, status=503, headers={"Retry-After": "5"}
    )
