"""The S3 backend: S3 Vectors for the memories, an ordinary bucket for what changes.

Imported only by :func:`shared.storage.factory.open_stores`, lazily, so the AWS SDK is never
loaded under PostgreSQL.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Final

from shared.config import Config
from shared.errors import NotFoundError, StorageError, StorageUnavailableError
from shared.storage.codec import NON_FILTERABLE_KEYS
from shared.storage.interfaces import Stores
from shared.storage.s3._client import (
    OBJECTS_NAME,
    VECTORS_NAME,
    AwsClients,
    open_aws_clients,
    translated,
)
from shared.storage.s3.object_store import S3ObjectStore
from shared.storage.s3.vector_store import S3VectorsStore

logger = logging.getLogger(__name__)

_INDEX_GUIDE: Final = "see docs/s3.md, 'Creating the vector index'"


@contextlib.asynccontextmanager
async def open_s3_stores(config: Config) -> AsyncIterator[Stores]:
    """Open both S3 stores after checking, with one cheap call each, that they can work.

    The index must exist with ``config.embedding.dim`` dimensions, the cosine metric and the
    design's non-filterable keys — none of which can be changed once it exists — and the state
    bucket must be reachable.

    Raises:
        StorageUnavailableError: the index or bucket is missing, unreachable or built wrong;
            the message names what and both numbers where there are two.
    """
    if config.s3.vector_bucket is None or config.s3.state_bucket is None:
        raise StorageUnavailableError("the S3 backend needs VECTOR_BUCKET and STATE_BUCKET")
    async with open_aws_clients(config) as clients:
        await _check_index(clients, config=config)
        await _check_state_bucket(clients, bucket=config.s3.state_bucket)
        description = (
            f"store: s3vectors://{config.s3.vector_bucket}/{config.s3.vector_index}, "
            f"state: s3://{config.s3.state_bucket}"
        )
        logger.info("s3_stores_opened", extra={"region": config.aws.region})
        yield Stores(
            vectors=S3VectorsStore(
                clients.s3vectors, bucket=config.s3.vector_bucket, index=config.s3.vector_index
            ),
            objects=S3ObjectStore(clients.s3, bucket=config.s3.state_bucket),
            description=description,
        )


async def _check_index(clients: AwsClients, *, config: Config) -> None:
    where = f"s3vectors://{config.s3.vector_bucket}/{config.s3.vector_index}"
    try:
        with translated(
            "GetIndex",
            target=where,
            store=VECTORS_NAME,
            missing_codes=frozenset({"NotFoundException"}),
        ):
            response = await clients.s3vectors.get_index(
                vectorBucketName=config.s3.vector_bucket, indexName=config.s3.vector_index
            )
    except NotFoundError as error:
        raise StorageUnavailableError(
            f"the vector index {where} does not exist — create it with dimension "
            f"{config.embedding.dim} and the cosine metric ({_INDEX_GUIDE})"
        ) from error
    except StorageError as error:
        raise StorageUnavailableError(f"the vector index could not be checked: {error}") from error
    index = response.get("index", {})
    dimension = index.get("dimension")
    if dimension != config.embedding.dim:
        raise StorageUnavailableError(
            f"the vector index {where} has dimension {dimension} but EMBEDDING_DIM is "
            f"{config.embedding.dim}; an index's dimension cannot change — set EMBEDDING_DIM "
            f"and EMBEDDING_MODEL to match it, or create a new index ({_INDEX_GUIDE})"
        )
    metric = index.get("distanceMetric")
    if metric != "cosine":
        raise StorageUnavailableError(
            f"the vector index {where} uses the {metric} distance metric; similarity is "
            f"1 − cosine distance, so it must be created with cosine ({_INDEX_GUIDE})"
        )
    declared = index.get("metadataConfiguration", {}).get("nonFilterableMetadataKeys", [])
    missing = [key for key in NON_FILTERABLE_KEYS if key not in declared]
    if missing or "tenantId" in declared:
        # Filterable metadata is capped at 2 KB: content would be refused on the first write.
        raise StorageUnavailableError(
            f"the vector index {where} declares non-filterable keys {sorted(declared)}; "
            f"it needs exactly {', '.join(NON_FILTERABLE_KEYS)} ({_INDEX_GUIDE})"
        )


async def _check_state_bucket(clients: AwsClients, *, bucket: str) -> None:
    try:
        with translated(
            "HeadBucket",
            target=f"s3://{bucket}",
            store=OBJECTS_NAME,
            missing_codes=frozenset({"404", "NoSuchBucket"}),
        ):
            await clients.s3.head_bucket(Bucket=bucket)
    except NotFoundError as error:
        raise StorageUnavailableError(f"the state bucket s3://{bucket} does not exist") from error
    except StorageError as error:
        raise StorageUnavailableError(f"the state bucket could not be checked: {error}") from error


__all__ = ["S3ObjectStore", "S3VectorsStore", "open_s3_stores"]
