"""The aiobotocore clients of the S3 backend, and the one place AWS errors become ours.

Credentials come only from the standard AWS chain (a pod's role, or the environment); nothing here
reads, stores or logs them. The endpoint is ``config.aws.endpoint_url`` when set; otherwise
botocore's own resolution runs, which honours per-service variables such as
``AWS_ENDPOINT_URL_S3VECTORS`` (tests point S3 and S3 Vectors at two different local servers).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any, Final

import msgspec
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore.exceptions import BotoCoreError, ClientError

from shared.config import Config
from shared.errors import ConflictError, NotFoundError, StorageError, StorageUnavailableError

# Standard retry mode backs off on throttling, 5xx and dropped connections; three attempts in
# all (botocore's ``max_attempts`` would count retries, making it four) keep a dead endpoint
# from stalling the boot or the compactor for long.
_RETRY_ATTEMPTS: Final = 3
# What a caller may be told failed (StorageError.store): products, never an endpoint or bucket.
VECTORS_NAME: Final = "S3 Vectors"
OBJECTS_NAME: Final = "S3"
# A recall, a remember and a counter flush can be in flight together on every pod.
_MAX_POOL_CONNECTIONS: Final = 32


_shared_loader: Any = None


def _session() -> Any:
    """A fresh session (credentials resolve anew) sharing one parsed-model cache per process:
    parsing the service models is most of the cost of opening a client."""
    global _shared_loader
    session = get_session()
    if _shared_loader is None:
        _shared_loader = session.get_component("data_loader")
    else:
        session.register_component("data_loader", _shared_loader)
    return session


class AwsClients(msgspec.Struct, frozen=True, kw_only=True):
    """The two open clients; aiobotocore clients are untyped, hence ``Any``."""

    s3: Any
    s3vectors: Any


@contextlib.asynccontextmanager
async def open_aws_clients(config: Config) -> AsyncIterator[AwsClients]:
    """Open the S3 and S3 Vectors clients in ``config.aws.region`` and close both after."""
    client_config = AioConfig(
        retries={"total_max_attempts": _RETRY_ATTEMPTS, "mode": "standard"},
        # Per attempt: a stalled endpoint (it accepts and never answers) is given up on after
        # STORAGE_TIMEOUT_S, then retried. That bounds the boot and the compactor; the API also
        # bounds a whole call, retries included, to the same deadline.
        connect_timeout=config.deadlines.storage_s,
        read_timeout=config.deadlines.storage_s,
        max_pool_connections=_MAX_POOL_CONNECTIONS,
    )
    session = _session()
    options: dict[str, Any] = {"region_name": config.aws.region, "config": client_config}
    if config.aws.endpoint_url:
        options["endpoint_url"] = config.aws.endpoint_url
    async with contextlib.AsyncExitStack() as stack:
        s3 = await stack.enter_async_context(session.create_client("s3", **options))
        s3vectors = await stack.enter_async_context(session.create_client("s3vectors", **options))
        yield AwsClients(s3=s3, s3vectors=s3vectors)


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", "") or "")


def _status(error: ClientError) -> int | None:
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else None


@contextlib.contextmanager
def translated(
    operation: str, *, target: str, store: str, missing_codes: frozenset[str] = frozenset()
) -> Iterator[None]:
    """Turn what botocore raises inside the block into our error tree, ``from`` the original.

    Args:
        operation: the API operation, as AWS names it (it appears in the message).
        target: where it was aimed (``s3://bucket/key``); never content. The message, which
            goes to the log, names it; a caller is told only ``store``.
        store: VECTORS_NAME or OBJECTS_NAME, for ``StorageError.store``.
        missing_codes: error codes that mean "no such thing" here and raise NotFoundError, so
            the caller decides what absence means (None for GetObject, a conflict for IfMatch).

    Raises:
        ConflictError: HTTP 412 or 409, a write condition that did not hold.
        NotFoundError: one of ``missing_codes``.
        StorageUnavailableError: the endpoint could not be reached or did not answer.
        StorageError: anything else AWS refused, with its code and message.
    """
    try:
        yield
    except ClientError as error:
        code, status = error_code(error), _status(error)
        message = str(error.response.get("Error", {}).get("Message", "") or "")
        detail = f"{code} (HTTP {status})" + (f": {message}" if message else "")
        if status in (409, 412):
            raise ConflictError(
                f"{operation} on {target}: the write condition did not hold — {detail}"
            ) from error
        if code in missing_codes:
            raise NotFoundError(f"{operation} on {target}: not found — {detail}") from error
        raise StorageError(f"{operation} on {target} failed — {detail}", store=store) from error
    except BotoCoreError as error:
        raise StorageUnavailableError(
            f"{operation} on {target} could not reach AWS — {error}", store=store
        ) from error
