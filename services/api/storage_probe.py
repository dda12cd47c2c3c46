"""The readiness probe of both stores, without the HTTP around it (``http.readiness`` answers
``GET /ready`` with it; a stdio server never imports the web stack).

Every tool needs both stores, so both are probed, at once, each bounded by ``READY_TIMEOUT_S``
(shorter than the tools' storage deadline, so a stalled store is seen by the probe first): one
key's etag in the state store (a HeadObject on S3, a row lookup on PostgreSQL) and one id in the
memory store (a GetVectors on S3 Vectors, a row lookup on PostgreSQL). Neither is ever written,
and the tenant the memory probe names cannot be a caller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from shared.errors import StorageError, StorageTimeoutError, StorageUnavailableError
from shared.storage import ObjectStore, VectorStore

READY_TIMEOUT_S: Final = 2.0
# Never written: reading a missing key still makes the store answer.
PROBE_KEY: Final = "ready/probe"
# A tenant no header can name (a tenant starts with a letter or a digit), and an id no memory has.
PROBE_TENANT: Final = "_ready"
PROBE_ID: Final = "probe"

ReadinessCheck = Callable[[], Awaitable[None]]


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
