"""``GET /ready``: whether this process can reach its storage now, for a readiness probe.

Liveness (``/health``) stays cheap and unconditional: a process whose database is down is alive,
and restarting it does not bring the database back. Readiness takes it out of the Service's
endpoints instead, so callers are routed to pods that can answer. The check is one read of one
key through the object store the tools use (a row lookup on PostgreSQL, a HeadObject on S3),
bounded by ``READY_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from shared.errors import StorageError
from shared.storage import ObjectStore

logger = logging.getLogger(__name__)

READY_PATH: Final = "/ready"
READY_TIMEOUT_S: Final = 2.0
# Never written: reading a missing key still makes the store answer.
PROBE_KEY: Final = "ready/probe"

ReadinessCheck = Callable[[], Awaitable[None]]


def storage_check(objects: ObjectStore) -> ReadinessCheck:
    """A check that reads ``PROBE_KEY``'s etag; raises StorageError when the store fails."""

    async def check() -> None:
        await objects.etag(PROBE_KEY)

    return check


async def always_ready() -> None:
    """For runtimes with no storage (tests of the HTTP layer)."""


async def ready_response(check: ReadinessCheck) -> web.Response:
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            await check()
    except TimeoutError:
        logger.warning("ready_check_failed", extra={"reason": "timeout"})
        return _unavailable(f"the memory store did not answer within {READY_TIMEOUT_S:g} s")
    except StorageError as error:
        # The error's class only: its message may name a host.
        logger.warning("ready_check_failed", extra={"reason": type(error).__name__})
        return _unavailable("the memory store could not be reached")
    return web.json_response({"status": "ready"})


def _unavailable(reason: str) -> web.Response:
    return web.json_response(
        {"status": "unavailable", "reason": reason}, status=503, headers={"Retry-After": "5"}
    )


__all__ = [
    "READY_PATH",
    "READY_TIMEOUT_S",
    "ReadinessCheck",
    "always_ready",
    "ready_response",
    "storage_check",
]
