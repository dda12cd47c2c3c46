"""Sessions and form tokens: signed, bound to one session, expiring, and never a key's stand-in."""

from __future__ import annotations

import time

from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from services.api.ui.access import SESSION_COOKIE, SESSION_S, Access, foreign_origin


def carrying(cookie: str) -> web.Request:
    return make_mocked_request("GET", "/ui", headers={"Cookie": f"{SESSION_COOKIE}={cookie}"})


def nonce_of(access: Access, request: web.Request, now_s: float | None = None) -> str | None:
    """The session's nonce when the cookie is valid and unexpired, signed out or not."""
    session = access.session_ref(request, now_s=now_s)
    return session.nonce if session is not None else None


def test_a_session_is_read_back_and_its_token_matches_it_only() -> None:
    access = Access(api_key=None)
    mine, theirs = access.issue(), access.issue()
    assert nonce_of(access, carrying(mine.cookie)) == mine.nonce
    assert access.csrf_matches(mine.nonce, access.csrf_token(mine.nonce))
    assert not access.csrf_matches(mine.nonce, access.csrf_token(theirs.nonce))
    assert not access.csrf_matches(None, access.csrf_token(mine.nonce))
    assert not access.csrf_matches(mine.nonce, "")


def test_a_forged_or_foreign_or_old_cookie_is_no_session() -> None:
    access = Access(api_key=None)
    session = access.issue()
    nonce, issued, mac = session.cookie.split(".")
    assert nonce_of(access, carrying(f"{nonce}x.{issued}.{mac}")) is None
    assert nonce_of(access, carrying(f"{nonce}.{issued}.{'0' * len(mac)}")) is None
    assert nonce_of(access, carrying("garbage")) is None
    # Another process (another secret) signed it: a restart ends every session.
    assert nonce_of(Access(api_key=None), carrying(session.cookie)) is None
    later = time.time() + SESSION_S + 1
    assert nonce_of(access, carrying(session.cookie), now_s=later) is None


def test_the_key_is_compared_whole() -> None:
    access = Access(api_key="s3cret")
    assert access.requires_key
    assert access.key_matches("s3cret")
    assert not access.key_matches("s3cre") and not access.key_matches("s3cret ")
    assert not Access(api_key=None).key_matches("")


def test_an_origin_is_foreign_unless_it_is_this_host() -> None:
    def origin_of(origin: str | None) -> str | None:
        headers = {"Host": "127.0.0.1:3001"}
        if origin is not None:
            headers["Origin"] = origin
        return foreign_origin(make_mocked_request("POST", "/ui/forget", headers=headers))

    assert origin_of(None) is None
    assert origin_of("http://127.0.0.1:3001") is None
    assert origin_of("http://evil.example") == "http://evil.example"
    assert origin_of("http://127.0.0.1:3000") == "http://127.0.0.1:3000"
    assert origin_of("null") == "null"


async def test_a_revoked_session_is_no_session_and_others_stay() -> None:
    access = Access(api_key="s3cret")
    mine, theirs = access.issue(), access.issue()
    assert await access.current_session(carrying(mine.cookie)) == mine.nonce
    await access.revoke(carrying(mine.cookie))
    assert await access.current_session(carrying(mine.cookie)) is None
    assert await access.current_session(carrying(theirs.cookie)) == theirs.nonce
    # The signature still holds: only the revocation ends it.
    assert nonce_of(access, carrying(mine.cookie)) == mine.nonce


def test_a_cookie_of_other_characters_is_no_session() -> None:
    # (Bytes that are not UTF-8 at all go over a real socket: test_memory_page_malformed.)
    access = Access(api_key=None)
    session = access.issue()
    nonce, issued, mac = session.cookie.split(".")
    assert nonce_of(access, carrying(f"{nonce}.{issued}.é{mac}")) is None
