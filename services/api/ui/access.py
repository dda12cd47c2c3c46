"""Who may use the memory page, and proof that a change was asked for by the page itself.

- A session is a signed cookie, ``<nonce>.<issued>.<HMAC(secret, nonce.issued)>``: HttpOnly (no
  script reads it), SameSite=Strict (no other site's page sends it), path ``/ui``. Without
  ``MCP_API_KEY`` (config allows that only for ``--local`` on loopback) the first page issues
  one; with the key only the login form does, once the key is presented, compared in constant
  time. With the key the secret is the deployment's (``revocation.deployment_secret``: every
  process accepts the session, a new key ends them all); without it, random per process. A
  session lasts ``SESSION_S`` at most, and signing out revokes it on every process
  (``revocation.Revocations``), not only in the browser that held it.
- Every form carries a token derived from the session, ``HMAC(secret, "csrf:" + nonce)``: the
  synchronizer-token pattern with nothing stored on the server. A POST without the cookie,
  without the token, or with another session's token is refused before its form is acted on,
  and so is a POST whose ``Origin`` names another site (browsers send it on every form POST).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Final
from urllib.parse import urlsplit

import msgspec
from aiohttp import web

from services.api.ui.revocation import Revocations, SessionRef

SESSION_COOKIE: Final = "mcp_memory_ui"
CSRF_FIELD: Final = "csrf_token"
SESSION_S: Final = 12 * 3600
COOKIE_PATH: Final = "/ui"


def _as_bytes(text: str) -> bytes:
    # A cookie or form value may carry any character; surrogateescape keeps the comparison total.
    return text.encode("utf-8", "surrogateescape")


class Session(msgspec.Struct, frozen=True, kw_only=True):
    nonce: str
    cookie: str


class Access:
    """The page's sessions, tokens and key check, under one random per-process secret."""

    def __init__(
        self,
        *,
        api_key: str | None,
        secret: bytes | None = None,
        revocations: Revocations | None = None,
    ) -> None:
        self._api_key = api_key
        self._secret = secret or secrets.token_bytes(32)
        self._revocations = revocations or Revocations(None)

    @property
    def requires_key(self) -> bool:
        return self._api_key is not None

    def _mac(self, purpose: str, value: str) -> str:
        message = f"{purpose}:{value}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    async def current_session(self, request: web.BaseRequest) -> str | None:
        """The nonce of a valid, unexpired session that has not been signed out."""
        session = self.session_ref(request)
        if session is None or await self._revocations.revoked(session):
            return None
        return session.nonce

    async def revoke(self, request: web.BaseRequest) -> None:
        """Sign the request's session out, on every process (nothing when it carries none)."""
        session = self.session_ref(request)
        if session is not None:
            await self._revocations.revoke(session)

    def session_ref(
        self, request: web.BaseRequest, *, now_s: float | None = None
    ) -> SessionRef | None:
        value = request.cookies.get(SESSION_COOKIE, "")
        if not value.isascii():
            # Not a cookie this page issued (bytes that are not even UTF-8 arrive as
            # surrogates): no session, and the next one issued replaces it.
            return None
        nonce, _, rest = value.partition(".")
        issued, _, mac = rest.partition(".")
        if not nonce or not issued.isdigit() or not mac:
            return None
        expected = self._mac("session", f"{nonce}.{issued}")
        if not hmac.compare_digest(_as_bytes(mac), expected.encode()):
            return None
        now = time.time() if now_s is None else now_s
        if not 0 <= now - int(issued) <= SESSION_S:
            return None
        return SessionRef(nonce=nonce, expires_s=int(issued) + SESSION_S)

    def issue(self) -> Session:
        """A fresh session: its nonce (for the page's tokens) and its cookie value."""
        nonce = secrets.token_urlsafe(18)
        issued = str(int(time.time()))
        return Session(
            nonce=nonce, cookie=f"{nonce}.{issued}.{self._mac('session', f'{nonce}.{issued}')}"
        )

    @staticmethod
    def set_cookie(response: web.StreamResponse, session: Session, *, secure: bool) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            session.cookie,
            path=COOKIE_PATH,
            httponly=True,
            samesite="Strict",
            secure=secure,
            max_age=SESSION_S,
        )

    @staticmethod
    def close_session(response: web.StreamResponse) -> None:
        response.del_cookie(SESSION_COOKIE, path=COOKIE_PATH)

    def csrf_token(self, nonce: str) -> str:
        return self._mac("csrf", nonce)

    def csrf_matches(self, nonce: str | None, token: str | None) -> bool:
        if nonce is None or not token:
            return False
        return hmac.compare_digest(_as_bytes(token), self.csrf_token(nonce).encode())

    def key_matches(self, presented: str) -> bool:
        if self._api_key is None:
            return False
        return hmac.compare_digest(_as_bytes(presented), _as_bytes(self._api_key))


def foreign_origin(request: web.BaseRequest) -> str | None:
    """The ``Origin`` of a request sent by another site's page (None when absent or this one):
    a form on evil.example posting here says so, whatever cookies it hoped to ride on."""
    origin = request.headers.get("Origin")
    if origin is None:
        return None
    if not origin.isascii():
        return origin  # no browser sends such an origin for this page
    try:
        parts = urlsplit(origin)
        netloc = parts.netloc
    except ValueError:  # "http://[" and the like: no origin of ours
        return origin
    if parts.scheme in ("http", "https") and netloc.lower() == request.host.lower():
        return None
    return origin


def is_https(request: web.BaseRequest) -> bool:
    """Whether the browser reached the page over TLS: directly, or through a proxy that ended
    TLS and says so in ``X-Forwarded-Proto`` (its first value: the proxy nearest the browser).
    Trusting the header costs nothing: it decides only whether the cookie is marked Secure, and
    a client that lies gets a cookie its own browser will not send back over plain HTTP."""
    if request.secure:
        return True
    forwarded = request.headers.get("X-Forwarded-Proto", "")
    return forwarded.split(",")[0].strip().lower() == "https"
