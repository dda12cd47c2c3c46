"""Memories in an S3 Vectors index: the body rides in the vector's metadata, so a recall is one
QueryVectors call with no second lookup."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from shared.errors import InvalidInputError
from shared.model import Hit, Memory
from shared.storage.codec import checked_metadata, from_metadata, parse_vector_key, vector_key
from shared.storage.interfaces import Embedding, MemoryRef, VectorStore, ready
from shared.storage.s3._client import VECTORS_NAME, translated

logger = logging.getLogger(__name__)

# AWS's documented per-call ceilings.
MAX_TOP_K: Final = 100
GET_BATCH: Final = 100
DELETE_BATCH: Final = 500
LIST_PAGE: Final = 1000


def _chunks(items: Sequence[str], size: int) -> list[Sequence[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _similarity(distance: object) -> float:
    # A missing or unusable distance is read as 1 (similarity 0), so it can never rank.
    if isinstance(distance, int | float) and not isinstance(distance, bool):
        if math.isfinite(distance):
            return 1.0 - float(distance)
    return 0.0


def _float32(embedding: Sequence[float]) -> dict[str, list[float]]:
    # Refused here with the same error as the PostgreSQL backend, not as AWS's 400 later.
    values = [float(x) for x in embedding]
    if not values:
        raise InvalidInputError("embedding", "embedding must be a non-empty list of numbers")
    if not all(math.isfinite(x) for x in values):
        raise InvalidInputError("embedding", "embedding must contain only finite numbers")
    return {"float32": values}


class S3VectorsStore(VectorStore):
    """The ``VectorStore`` over one S3 Vectors index; keys are ``<tenant>#<id>``."""

    display_name = VECTORS_NAME

    def __init__(self, client: Any, *, bucket: str, index: str) -> None:
        self._client = client
        self._bucket = bucket
        self._index = index
        self._where = f"s3vectors://{bucket}/{index}"

    def _rebuild(self, tenant: str, vector: dict[str, Any]) -> Memory | None:
        metadata = vector.get("metadata")
        key = vector.get("key")
        if not isinstance(metadata, dict) or not isinstance(key, str):
            return None
        memory = from_metadata(key, metadata)
        # The filter already said tenantId; checking again is what keeps a filter bug (ours or
        # the service's) from handing one tenant another's memories.
        if memory is None or memory.tenant != tenant:
            if memory is not None:
                logger.warning("vector_tenant_mismatch", extra={"index": self._where})
            return None
        return memory

    async def put(self, memory: Memory, embedding: Sequence[float]) -> None:
        metadata = checked_metadata(memory)
        vector = {
            "key": vector_key(memory.tenant, memory.id),
            "data": _float32(embedding),
            "metadata": metadata,
        }
        with translated("PutVectors", target=self._where, store=VECTORS_NAME):
            await self._client.put_vectors(
                vectorBucketName=self._bucket, indexName=self._index, vectors=[vector]
            )

    async def query(self, tenant: str, embedding: Embedding, *, top_k: int) -> list[Hit]:
        if top_k < 1:
            raise InvalidInputError("top_k", f"top_k must be at least 1, got {top_k}")
        vector = _float32(await ready(embedding))
        with translated("QueryVectors", target=self._where, store=VECTORS_NAME):
            response = await self._client.query_vectors(
                vectorBucketName=self._bucket,
                indexName=self._index,
                topK=min(top_k, MAX_TOP_K),
                queryVector=vector,
                filter={"tenantId": tenant},
                returnMetadata=True,
                returnDistance=True,
            )
        hits: list[Hit] = []
        for vector in response.get("vectors", []):
            memory = self._rebuild(tenant, vector)
            if memory is not None:
                hits.append(Hit(memory=memory, similarity=_similarity(vector.get("distance"))))
        return hits

    async def get(self, tenant: str, ids: Sequence[str]) -> list[Memory]:
        keys = [vector_key(tenant, memory_id) for memory_id in dict.fromkeys(ids)]
        memories: list[Memory] = []
        for batch in _chunks(keys, GET_BATCH):
            with translated("GetVectors", target=self._where, store=VECTORS_NAME):
                response = await self._client.get_vectors(
                    vectorBucketName=self._bucket,
                    indexName=self._index,
                    keys=list(batch),
                    returnMetadata=True,
                )
            for vector in response.get("vectors", []):
                memory = self._rebuild(tenant, vector)
                if memory is not None:
                    memories.append(memory)
        return memories

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        keys = [vector_key(tenant, memory_id) for memory_id in dict.fromkeys(ids)]
        for batch in _chunks(keys, DELETE_BATCH):
            with translated("DeleteVectors", target=self._where, store=VECTORS_NAME):
                await self._client.delete_vectors(
                    vectorBucketName=self._bucket, indexName=self._index, keys=list(batch)
                )

    async def scan_ids(self) -> AsyncIterator[list[MemoryRef]]:
        # Keys only (no data, no metadata): the smallest ListVectors page AWS serves.
        token: str | None = None
        while True:
            request: dict[str, Any] = {
                "vectorBucketName": self._bucket,
                "indexName": self._index,
                "maxResults": LIST_PAGE,
                "returnData": False,
                "returnMetadata": False,
            }
            if token is not None:
                request["nextToken"] = token
            with translated("ListVectors", target=self._where, store=VECTORS_NAME):
                response = await self._client.list_vectors(**request)
            refs = [
                MemoryRef(*parsed)
                for vector in response.get("vectors", [])
                if isinstance(vector.get("key"), str)
                and (parsed := parse_vector_key(vector["key"])) is not None
            ]
            if refs:
                yield refs
            token = response.get("nextToken")
            if not isinstance(token, str) or not token:
                return
