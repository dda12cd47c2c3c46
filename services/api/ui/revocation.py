"""What makes the page's sessions the same on every process of a deployment, and revocable.

- **The signing secret** is shared: one random value stored once under ``ui/session-secret`` in
  the state store (created with if-none-match, so the first process to boot writes it and every
  other reads it), mixed with ``MCP_API_KEY``. A session signed by one pod is valid on the next,
  a restart ends nothing, and changing the key ends every session (their MACs no longer match).
- **A revoked session** (signed out) is an immutable record,
  ``ui/revoked/<expires at, 11 digits>-<nonce>``, written once and never changed. Every process
  checks a valid cookie's record (an etag read, no body) at most every ``REVOCATION_CACHE_S``
  per session, so a session signed out on one pod ends on the others within that; on its own
  process at once. A record is useless once its session would have expired anyway: the expiry
  leads the key, so a sign-out deletes the oldest expired ones by listing from the start.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import Final

import msgspec

from shared.errors import ConflictError
from shared.storage import ObjectStore

SECRET_KEY: Final = "ui/session-secret"
REVOKED_ROOT: Final = "ui/revoked/"
REVOCATION_CACHE_S: Final = 2.0
# Records deleted per sign-out at most: pruning keeps pace with sign-outs, a bounded cost each.
PRUNE_BATCH: Final = 50
# Sessions whose "not revoked" answer is remembered, at most: beyond it the oldest are dropped
# (and read again when next used).
_CACHED_SESSIONS: Final = 10_000


class SessionRef(msgspec.Struct, frozen=True, kw_only=True):
    """A session as its cookie names it: its nonce and when it expires (seconds)."""

    nonce: str
    expires_s: int


def revoked_key(session: SessionRef) -> str:
    return f"{REVOKED_ROOT}{session.expires_s:011d}-{session.nonce}"


def _expiry_of(key: str) -> int | None:
    stamp = key.removeprefix(REVOKED_ROOT).partition("-")[0]
    return int(stamp) if stamp.isdigit() else None


async def deployment_secret(objects: ObjectStore, api_key: str) -> bytes:
    """The secret every process signs sessions with: the stored random value, mixed with the
    key (so a new key ends every session). Raises StorageError when the store fails."""
    stored = await objects.get(SECRET_KEY)
    if stored is None:
        try:
            await objects.put(SECRET_KEY, secrets.token_hex(32), if_none_match=True)
        except ConflictError:
            pass  # another process wrote it first: use theirs
        stored = await objects.get(SECRET_KEY)
        assert stored is not None
    return hmac.new(
        stored.body.encode(),
        b"ui-session:" + api_key.encode("utf-8", "surrogateescape"),
        hashlib.sha256,
    ).digest()


class Revocations:
    """Signed-out sessions: recorded in the state store (``objects``), or, without one, in this
    process only."""

    def __init__(
        self,
        objects: ObjectStore | None,
        *,
        cache_s: float = REVOCATION_CACHE_S,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._objects = objects
        self._cache_s = cache_s
        self._clock = clock
        self._wall_clock = wall_clock
        self._revoked: dict[str, int] = {}  # nonce -> expiry, known revoked
        self._checked: dict[str, float] = {}  # nonce -> when the store last said "not revoked"

    async def revoked(self, session: SessionRef) -> bool:
        if session.nonce in self._revoked:
            return True
        if self._objects is None:
            return False
        now = self._clock()
        checked = self._checked.get(session.nonce)
        if checked is not None and now - checked < self._cache_s:
            return False
        if await self._objects.etag(revoked_key(session)) is not None:
            self._remember_revoked(session)
            return True
        self._checked.pop(session.nonce, None)
        self._checked[session.nonce] = now
        if len(self._checked) > _CACHED_SESSIONS:
            del self._checked[next(iter(self._checked))]
        return False

    async def revoke(self, session: SessionRef) -> None:
        """Record the session as signed out, on every process; then prune expired records."""
        self._remember_revoked(session)
        if self._objects is None:
            return
        body = json.dumps({"revokedAt": round(self._wall_clock())})
        try:
            await self._objects.put(revoked_key(session), body, if_none_match=True)
        except ConflictError:
            pass  # signed out twice: the record is immutable and already says so
        await self._prune()

    def _remember_revoked(self, session: SessionRef) -> None:
        self._checked.pop(session.nonce, None)
        self._revoked[session.nonce] = session.expires_s
        now = self._wall_clock()
        if len(self._revoked) > _CACHED_SESSIONS:
            self._revoked = {n: e for n, e in self._revoked.items() if e >= now}

    async def _prune(self) -> None:
        assert self._objects is not None
        now = self._wall_clock()
        keys = await self._objects.list(REVOKED_ROOT, limit=PRUNE_BATCH)
        expired = [key for key in keys if (_expiry_of(key) or 0) < now]
        if expired:
            await self._objects.delete(expired)
