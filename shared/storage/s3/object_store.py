"""Small mutable objects in an ordinary S3 bucket: the recency index and the counter shards.

Compare-and-swap is S3's conditional write: ``IfMatch`` names the ETag read, ``IfNoneMatch="*"``
creates only. Either failing (412, or 409 when two conditional writes race) is a ConflictError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from shared.errors import ConflictError, InvalidInputError, NotFoundError, StorageError
from shared.storage.interfaces import ObjectStore, StoredObject, WriteCondition
from shared.storage.s3._client import OBJECTS_NAME, translated

LIST_PAGE: Final = 1000
DELETE_BATCH: Final = 1000
_NO_SUCH_KEY: Final = frozenset({"NoSuchKey"})
# HeadObject has no error body, so a missing key comes back as the bare status.
_NO_SUCH_KEY_HEAD: Final = frozenset({"404", "NoSuchKey", "NotFound"})


class S3ObjectStore(ObjectStore):
    """The ``ObjectStore`` over one S3 bucket; ETags are passed through exactly as S3 sends them."""

    display_name = OBJECTS_NAME

    def __init__(self, client: Any, *, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def _where(self, key: str) -> str:
        return f"s3://{self._bucket}/{key}"

    async def get(self, key: str) -> StoredObject | None:
        try:
            with translated(
                "GetObject", target=self._where(key), missing_codes=_NO_SUCH_KEY, store=OBJECTS_NAME
            ):
                response = await self._client.get_object(Bucket=self._bucket, Key=key)
                async with response["Body"] as stream:
                    raw = await stream.read()
        except NotFoundError:
            return None
        etag = response.get("ETag")
        # Without an ETag there is nothing a compare-and-swap could name: treat it as absent.
        if not etag:
            return None
        return StoredObject(body=raw.decode(), etag=etag)

    async def etag(self, key: str) -> str | None:
        try:
            with translated(
                "HeadObject",
                target=self._where(key),
                missing_codes=_NO_SUCH_KEY_HEAD,
                store=OBJECTS_NAME,
            ):
                response = await self._client.head_object(Bucket=self._bucket, Key=key)
        except NotFoundError:
            return None
        etag = response.get("ETag")
        return str(etag) if etag else None  # no ETag: absent, as get treats it

    async def write(self, key: str, body: str, condition: WriteCondition) -> str:
        if_match = condition.if_match
        request: dict[str, Any] = {
            "Bucket": self._bucket,
            "Key": key,
            "Body": body.encode(),
            "ContentType": "application/json",
        }
        if if_match is not None:
            request["IfMatch"] = if_match
        if condition.if_none_match:
            request["IfNoneMatch"] = "*"
        target = self._where(key)
        try:
            # IfMatch on a key that was deleted meanwhile answers 404 NoSuchKey: for the caller
            # that is the same lost race as a stale ETag.
            missing = _NO_SUCH_KEY if if_match is not None else frozenset[str]()
            with translated("PutObject", target=target, missing_codes=missing, store=OBJECTS_NAME):
                response = await self._client.put_object(**request)
        except NotFoundError as error:
            raise ConflictError(
                f"PutObject on {target}: the object named by IfMatch no longer exists"
            ) from error
        return str(response["ETag"])

    async def list(
        self, prefix: str, *, limit: int = 1000, start_after: str | None = None
    ) -> list[str]:
        if limit < 1:
            raise InvalidInputError("limit", f"limit must be at least 1, got {limit}")
        keys: list[str] = []
        token: str | None = None
        while len(keys) < limit:
            request: dict[str, Any] = {
                "Bucket": self._bucket,
                "Prefix": prefix,
                "MaxKeys": min(LIST_PAGE, limit - len(keys)),
            }
            if start_after is not None:
                request["StartAfter"] = start_after
            if token is not None:
                request["ContinuationToken"] = token
            with translated("ListObjectsV2", target=self._where(prefix), store=OBJECTS_NAME):
                response = await self._client.list_objects_v2(**request)
            keys.extend(item["Key"] for item in response.get("Contents", []))
            token = response.get("NextContinuationToken")
            # A truncated page without a token cannot be continued; stop rather than loop.
            if not response.get("IsTruncated") or not token:
                break
        return keys[:limit]

    async def delete(self, keys: Sequence[str]) -> None:
        failures: list[dict[str, Any]] = []
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), DELETE_BATCH):
            batch = unique[start : start + DELETE_BATCH]
            with translated("DeleteObjects", target=self._where(""), store=OBJECTS_NAME):
                response = await self._client.delete_objects(
                    Bucket=self._bucket,
                    Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True},
                )
            failures.extend(response.get("Errors", []))
        if failures:
            first = failures[0]
            raise StorageError(
                f"DeleteObjects in s3://{self._bucket}: {len(failures)} key(s) not deleted; "
                f"first {first.get('Key')!r}: {first.get('Code')} {first.get('Message', '')}",
                store=OBJECTS_NAME,
            )
