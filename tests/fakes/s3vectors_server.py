"""An HTTP server speaking the S3 Vectors REST API, for tests and the benchmark.

moto serves S3 Vectors without QueryVectors, so this stands in for the whole service. It speaks
the wire protocol botocore's ``s3vectors`` model describes (rest-json, ``POST /<Operation>``), so
aiobotocore reaches it through ``endpoint_url`` with real signing and serialisation. It enforces
the limits AWS documents ("Limitations and restrictions", PutInputVector):

* top-K 1–100; ≤ 500 vectors per PutVectors and DeleteVectors; ≤ 100 keys per GetVectors;
* dimension 1–4096, fixed per index; every vector exactly that long, finite, and (cosine) not zero;
* filterable metadata ≤ 2 KB, all metadata ≤ 40 KB, ≤ 50 keys, no empty arrays, no nulls/objects;
* non-filterable keys (≤ 10, set at CreateIndex) cannot be used in a filter.

Distances are exact (numpy), not approximate. QueryVectors answers its top-K **worst first**: AWS
promises no order we rely on, and a caller that assumed nearest-first should fail here, not in
production. ``calls`` counts requests per operation so tests can assert on batching, and
``ignore_filter`` makes QueryVectors misbehave by skipping the filter (to test callers' re-checks).
"""

from __future__ import annotations

import asyncio
import collections
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import numpy as np
from aiohttp import web

MAX_TOP_K: Final = 100
MAX_PUT_VECTORS: Final = 500
MAX_DELETE_VECTORS: Final = 500
MAX_GET_VECTORS: Final = 100
MAX_LIST_RESULTS: Final = 1000
MAX_DIMENSION: Final = 4096
MAX_FILTERABLE_BYTES: Final = 2 * 1024
MAX_METADATA_BYTES: Final = 40 * 1024
MAX_METADATA_KEYS: Final = 50
MAX_NON_FILTERABLE_KEYS: Final = 10
MAX_KEY_CHARS: Final = 1024

Json = dict[str, Any]


class FakeAwsError(Exception):
    """An AWS error response: botocore reads the code from ``x-amzn-ErrorType``."""

    def __init__(self, code: str, status: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message


def _invalid(message: str) -> FakeAwsError:
    return FakeAwsError("ValidationException", 400, message)


def _not_found(message: str) -> FakeAwsError:
    return FakeAwsError("NotFoundException", 404, message)


def _json_bytes(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class _Index:
    def __init__(
        self, *, bucket: str, name: str, dimension: int, metric: str, non_filterable: list[str]
    ) -> None:
        self.bucket = bucket
        self.name = name
        self.dimension = dimension
        self.metric = metric
        self.non_filterable = frozenset(non_filterable)
        self.created_s = time.time()
        self.vectors: dict[str, tuple[np.ndarray[Any, Any], Json]] = {}

    @property
    def arn(self) -> str:
        return f"arn:aws:s3vectors:us-east-1:123456789012:bucket/{self.bucket}/index/{self.name}"

    def describe(self) -> Json:
        described: Json = {
            "vectorBucketName": self.bucket,
            "indexName": self.name,
            "indexArn": self.arn,
            "creationTime": self.created_s,
            "dataType": "float32",
            "dimension": self.dimension,
            "distanceMetric": self.metric,
        }
        if self.non_filterable:
            described["metadataConfiguration"] = {
                "nonFilterableMetadataKeys": sorted(self.non_filterable)
            }
        return described

    def vector(self, raw: object, *, field: str) -> np.ndarray[Any, Any]:
        data = raw.get("float32") if isinstance(raw, dict) else None
        if not isinstance(data, list):
            raise _invalid(f"{field}: expected a float32 vector")
        if len(data) != self.dimension:
            raise _invalid(
                f"{field}: Invalid vector dimension {len(data)}; the index dimension is "
                f"{self.dimension}"
            )
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in data):
            raise _invalid(f"{field}: vector data must contain only finite floating-point values")
        array = np.asarray(data, dtype=np.float32)
        if self.metric == "cosine" and not np.any(array):
            raise _invalid(f"{field}: zero vectors are not allowed for the cosine distance metric")
        return array

    def check_metadata(self, metadata: object, *, field: str) -> Json:
        if metadata is None:
            return {}
        if not isinstance(metadata, dict):
            raise _invalid(f"{field}: metadata must be a JSON object")
        if len(metadata) > MAX_METADATA_KEYS:
            raise _invalid(f"{field}: at most {MAX_METADATA_KEYS} metadata keys per vector")
        for key, value in metadata.items():
            _check_metadata_value(value, field=f"{field}.{key}")
        filterable = {k: v for k, v in metadata.items() if k not in self.non_filterable}
        if _json_bytes(filterable) > MAX_FILTERABLE_BYTES:
            raise _invalid(
                f"{field}: filterable metadata must be at most {MAX_FILTERABLE_BYTES} bytes"
            )
        if _json_bytes(metadata) > MAX_METADATA_BYTES:
            raise _invalid(f"{field}: metadata must be at most {MAX_METADATA_BYTES} bytes")
        return metadata

    def check_filter(self, expression: object) -> None:
        if not isinstance(expression, dict) or not expression:
            raise _invalid("filter: must be a non-empty JSON object")
        for key, value in expression.items():
            if key in ("$and", "$or"):
                if not isinstance(value, list) or not value:
                    raise _invalid(f"filter: {key} takes a non-empty list")
                for item in value:
                    self.check_filter(item)
            elif key.startswith("$"):
                raise _invalid(f"filter: unsupported operator {key}")
            elif key in self.non_filterable:
                raise _invalid(f"filter: {key} is non-filterable metadata")
            elif isinstance(value, dict):
                for operator in value:
                    if operator not in _OPERATORS:
                        raise _invalid(f"filter: unsupported operator {operator}")


def _check_metadata_value(value: object, *, field: str) -> None:
    if isinstance(value, list):
        if not value:
            raise _invalid(f"{field}: metadata arrays must not be empty")
        for item in value:
            if not isinstance(item, str | int | float):
                raise _invalid(f"{field}: array items must be strings, numbers or booleans")
    elif not isinstance(value, str | int | float):
        raise _invalid(f"{field}: metadata values must be strings, numbers, booleans or arrays")


def _equals(stored: object, wanted: object) -> bool:
    # An array value matches when any element does, as S3 Vectors documents for $eq.
    if isinstance(stored, list):
        return wanted in stored
    return stored == wanted and type(stored) is type(wanted)


def _compare(stored: object, wanted: object, op: Callable[[float, float], bool]) -> bool:
    numbers = (int, float)
    if isinstance(stored, numbers) and isinstance(wanted, numbers):
        return op(float(stored), float(wanted))
    return False


_OPERATORS: Final[dict[str, Callable[[object, object], bool]]] = {
    "$eq": _equals,
    "$ne": lambda s, w: not _equals(s, w),
    "$in": lambda s, w: isinstance(w, list) and any(_equals(s, x) for x in w),
    "$nin": lambda s, w: isinstance(w, list) and not any(_equals(s, x) for x in w),
    "$gt": lambda s, w: _compare(s, w, float.__gt__),
    "$gte": lambda s, w: _compare(s, w, float.__ge__),
    "$lt": lambda s, w: _compare(s, w, float.__lt__),
    "$lte": lambda s, w: _compare(s, w, float.__le__),
}
_MISSING: Final = object()


def _matches(metadata: Json, expression: Json) -> bool:
    for key, condition in expression.items():
        if key == "$and":
            if not all(_matches(metadata, sub) for sub in condition):
                return False
        elif key == "$or":
            if not any(_matches(metadata, sub) for sub in condition):
                return False
        elif isinstance(condition, dict):
            stored = metadata.get(key, _MISSING)
            for operator, wanted in condition.items():
                if operator == "$exists":
                    if (stored is not _MISSING) != bool(wanted):
                        return False
                elif stored is _MISSING or not _OPERATORS[operator](stored, wanted):
                    return False
        elif key not in metadata or not _equals(metadata[key], condition):
            return False
    return True


class S3VectorsFake:
    """The service's state and its aiohttp application; ``start()`` returns the base URL."""

    def __init__(self) -> None:
        self.buckets: dict[str, dict[str, _Index]] = {}
        self.calls: collections.Counter[str] = collections.Counter()
        self.ignore_filter = False
        # Operations held until their event is set (a slow service). A request whose caller
        # went away while it was held is dropped, as if it never reached the service.
        self.held: dict[str, asyncio.Event] = {}
        # Operations applied at once but answered only when their event is set: the caller
        # can be killed after the service did the work and before it heard so.
        self.held_after: dict[str, asyncio.Event] = {}
        self._runner: web.AppRunner | None = None
        self.app = web.Application(client_max_size=20 * 1024 * 1024)
        handlers: dict[str, Callable[[Json], Json]] = {
            "CreateVectorBucket": self._create_bucket,
            "CreateIndex": self._create_index,
            "GetIndex": self._get_index,
            "DeleteIndex": self._delete_index,
            "PutVectors": self._put_vectors,
            "GetVectors": self._get_vectors,
            "QueryVectors": self._query_vectors,
            "DeleteVectors": self._delete_vectors,
            "ListVectors": self._list_vectors,
        }
        for operation, handler in handlers.items():
            self.app.router.add_post(f"/{operation}", self._endpoint(operation, handler))

    async def start(self, *, host: str = "127.0.0.1", port: int = 0) -> str:
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        bound = self._runner.addresses[0]
        return f"http://{bound[0]}:{bound[1]}"

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def reset(self) -> None:
        self.buckets.clear()
        self.calls.clear()
        self.ignore_filter = False
        for gate in (*self.held.values(), *self.held_after.values()):
            gate.set()
        self.held.clear()
        self.held_after.clear()

    def _endpoint(
        self, operation: str, handler: Callable[[Json], Json]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def endpoint(request: web.Request) -> web.Response:
            self.calls[operation] += 1
            gate = self.held.get(operation)
            if gate is not None:
                await gate.wait()
                if request.transport is None or request.transport.is_closing():
                    self.calls[f"{operation}:dropped"] += 1
                    return web.Response(status=499)
            try:
                body = await request.json() if request.can_read_body else {}
                if not isinstance(body, dict):
                    raise _invalid("the request body must be a JSON object")
                response = web.json_response(handler(body))
                applied = self.held_after.get(operation)
                if applied is not None:
                    self.calls[f"{operation}:applied"] += 1
                    await applied.wait()
                return response
            except FakeAwsError as error:
                return web.json_response(
                    {"message": error.message},
                    status=error.status,
                    headers={"x-amzn-ErrorType": error.code},
                )
            except json.JSONDecodeError:
                return web.json_response(
                    {"message": "malformed JSON"},
                    status=400,
                    headers={"x-amzn-ErrorType": "ValidationException"},
                )

        return endpoint

    def _index(self, body: Json) -> _Index:
        bucket, name = body.get("vectorBucketName"), body.get("indexName")
        arn = body.get("indexArn")
        if isinstance(arn, str) and "/index/" in arn:
            bucket = arn.split(":bucket/", 1)[-1].split("/index/", 1)[0]
            name = arn.rsplit("/index/", 1)[1]
        if not isinstance(bucket, str) or bucket not in self.buckets:
            raise _not_found(f"The specified vector bucket could not be found: {bucket}")
        indexes = self.buckets[bucket]
        if not isinstance(name, str) or name not in indexes:
            raise _not_found(f"The specified index could not be found: {name}")
        return indexes[name]

    def _create_bucket(self, body: Json) -> Json:
        name = body.get("vectorBucketName")
        if not isinstance(name, str) or not 3 <= len(name) <= 63:
            raise _invalid("vectorBucketName: must be 3-63 characters")
        if name in self.buckets:
            raise FakeAwsError("ConflictException", 409, f"bucket {name} already exists")
        self.buckets[name] = {}
        return {}

    def _create_index(self, body: Json) -> Json:
        bucket = body.get("vectorBucketName")
        if not isinstance(bucket, str) or bucket not in self.buckets:
            raise _not_found(f"The specified vector bucket could not be found: {bucket}")
        name, dimension = body.get("indexName"), body.get("dimension")
        metric = body.get("distanceMetric")
        if not isinstance(name, str) or not 3 <= len(name) <= 63:
            raise _invalid("indexName: must be 3-63 characters")
        if not isinstance(dimension, int) or not 1 <= dimension <= MAX_DIMENSION:
            raise _invalid(f"dimension: must be between 1 and {MAX_DIMENSION}")
        if metric not in ("cosine", "euclidean") or body.get("dataType") != "float32":
            raise _invalid("distanceMetric must be cosine or euclidean; dataType float32")
        config = body.get("metadataConfiguration") or {}
        non_filterable = config.get("nonFilterableMetadataKeys", [])
        if len(non_filterable) > MAX_NON_FILTERABLE_KEYS:
            raise _invalid(f"nonFilterableMetadataKeys: at most {MAX_NON_FILTERABLE_KEYS} keys")
        if name in self.buckets[bucket]:
            raise FakeAwsError("ConflictException", 409, f"index {name} already exists")
        self.buckets[bucket][name] = _Index(
            bucket=bucket,
            name=name,
            dimension=dimension,
            metric=metric,
            non_filterable=list(non_filterable),
        )
        return {}

    def _get_index(self, body: Json) -> Json:
        return {"index": self._index(body).describe()}

    def _delete_index(self, body: Json) -> Json:
        index = self._index(body)
        del self.buckets[index.bucket][index.name]
        return {}

    def _put_vectors(self, body: Json) -> Json:
        index = self._index(body)
        vectors = body.get("vectors")
        if not isinstance(vectors, list) or not 1 <= len(vectors) <= MAX_PUT_VECTORS:
            raise _invalid(f"vectors: between 1 and {MAX_PUT_VECTORS} vectors per request")
        staged: dict[str, tuple[np.ndarray[Any, Any], Json]] = {}
        for i, vector in enumerate(vectors):
            field = f"vectors[{i}]"
            key = vector.get("key") if isinstance(vector, dict) else None
            if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS:
                raise _invalid(f"{field}.key: must be 1-{MAX_KEY_CHARS} characters")
            data = index.vector(vector.get("data"), field=f"{field}.data")
            metadata = index.check_metadata(vector.get("metadata"), field=f"{field}.metadata")
            staged[key] = (data, metadata)
        index.vectors.update(staged)  # all or nothing: validated before any is stored
        return {}

    def _keys(self, body: Json, *, limit: int) -> list[str]:
        keys = body.get("keys")
        if not isinstance(keys, list) or not 1 <= len(keys) <= limit:
            raise _invalid(f"keys: between 1 and {limit} keys per request")
        if not all(isinstance(k, str) and 1 <= len(k) <= MAX_KEY_CHARS for k in keys):
            raise _invalid(f"keys: each key must be 1-{MAX_KEY_CHARS} characters")
        return keys

    def _get_vectors(self, body: Json) -> Json:
        index = self._index(body)
        found: list[Json] = []
        for key in self._keys(body, limit=MAX_GET_VECTORS):
            if key in index.vectors:
                found.append(self._render(key, index, body))
        return {"vectors": found}

    @staticmethod
    def _render(key: str, index: _Index, body: Json) -> Json:
        data, metadata = index.vectors[key]
        vector: Json = {"key": key}
        if body.get("returnData"):
            vector["data"] = {"float32": data.tolist()}
        if body.get("returnMetadata") and metadata:
            vector["metadata"] = metadata
        return vector

    def _query_vectors(self, body: Json) -> Json:
        index = self._index(body)
        top_k = body.get("topK")
        if not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise _invalid(f"topK: must be between 1 and {MAX_TOP_K}")
        query = index.vector(body.get("queryVector"), field="queryVector")
        expression = body.get("filter")
        if expression is not None:
            index.check_filter(expression)
        keys = [
            key
            for key, (_, metadata) in index.vectors.items()
            if expression is None or self.ignore_filter or _matches(metadata, expression)
        ]
        if not keys:
            return {"vectors": [], "distanceMetric": index.metric}
        matrix = np.stack([index.vectors[key][0] for key in keys])
        distances = _distances(matrix, query, metric=index.metric)
        nearest = np.argsort(distances, kind="stable")[:top_k]
        results: list[Json] = []
        for position in reversed(nearest.tolist()):  # worst first: see the module docstring
            key = keys[position]
            result: Json = {"key": key}
            if body.get("returnDistance"):
                result["distance"] = float(distances[position])
            metadata = index.vectors[key][1]
            if body.get("returnMetadata") and metadata:
                result["metadata"] = metadata
            results.append(result)
        return {"vectors": results, "distanceMetric": index.metric}

    def _delete_vectors(self, body: Json) -> Json:
        index = self._index(body)
        for key in self._keys(body, limit=MAX_DELETE_VECTORS):
            index.vectors.pop(key, None)
        return {}

    def _list_vectors(self, body: Json) -> Json:
        index = self._index(body)
        max_results = body.get("maxResults", 500)
        if not isinstance(max_results, int) or not 1 <= max_results <= MAX_LIST_RESULTS:
            raise _invalid(f"maxResults: must be between 1 and {MAX_LIST_RESULTS}")
        keys = sorted(index.vectors)
        token = body.get("nextToken")
        start = int(token) if isinstance(token, str) and token.isdigit() else 0
        page = keys[start : start + max_results]
        listed: Json = {"vectors": [self._render(key, index, body) for key in page]}
        if start + max_results < len(keys):
            listed["nextToken"] = str(start + max_results)
        return listed


def _distances(
    matrix: np.ndarray[Any, Any], query: np.ndarray[Any, Any], *, metric: str
) -> np.ndarray[Any, Any]:
    if metric == "euclidean":
        return np.asarray(np.linalg.norm(matrix - query, axis=1))
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    return np.asarray(1.0 - (matrix @ query) / norms)
