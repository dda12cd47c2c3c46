"""``GET /ready``: whether this process can reach its storage now, for a readiness probe.

Liveness (``/health``) stays cheap and unconditional: a process whose database is down is alive,
and restarting it does not bring the database back. Readiness takes it out of the Service's
endpoints instead, so callers are routed to pods that can answer. What it runs is the probe of
both stores (``storage_probe``). The answer names which store failed, never where it is.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from aiohttp import web

from services.api.storage_probe import READY_TIMEOUT_S, ReadinessCheck
from shared.errors import StorageError, StorageFullError, StorageTimeoutError

logger = logging.getLogger(__name__)

READY_PATH: Final = "/ready"
NO_SPACE: Final = "no space left on its disk: nothing can be written until space is freed"


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
