"""With MCP_API_KEY set the memory page asks for the key first, on a real ``--local`` process:
nothing of a tenant's is shown before it, a wrong key is refused, the right one opens a session
(HttpOnly, SameSite=Strict), and signing out ends it."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator

import aiohttp
import pytest

from services.api.http.throttle import FIRST_DELAY_S
from tests.api._process import keyed_local_api
from tests.api.conftest import mcp_session

KEY = "page-key-4f1c"
FACT = "The staging cluster is called heron."


@pytest.fixture(scope="module")
async def keyed() -> AsyncIterator[tuple[str, str]]:
    """The page's base URL and the MCP URL of a --local server with a key, one memory stored."""
    async with keyed_local_api(KEY) as (api, mcp_url, page_url):
        assert (await api.wait_for("ui_listening"))["login"] == "MCP_API_KEY"
        headers = {"X-Memory-Tenant": "acme", "Authorization": f"Bearer {KEY}"}
        async with mcp_session(mcp_url, headers=headers) as client:
            stored = await client.call_tool("remember", {"content": FACT})
            assert not stored.is_error
        yield page_url, mcp_url


def session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def test_nothing_is_shown_before_the_key(keyed: tuple[str, str]) -> None:
    base, _ = keyed
    async with session() as http:
        for path in ("/ui", "/ui?tenant=acme", "/ui?tenant=acme&q=staging"):
            async with http.get(f"{base}{path}") as response:
                body = await response.text()
                assert response.status == 401
                assert "Sign in" in body and "heron" not in body
                assert "Set-Cookie" not in response.headers
        # The stylesheet is public: the login page needs it.
        async with http.get(f"{base}/ui/static/ui.css") as response:
            assert response.status == 200
        # A change is refused before anything: no session, no token.
        async with http.post(f"{base}/ui/export", data={"tenant": "acme"}) as response:
            assert response.status == 403


async def test_a_wrong_key_is_refused_and_costs_time(keyed: tuple[str, str]) -> None:
    base, _ = keyed
    async with session() as http:
        started = time.monotonic()
        async with http.post(f"{base}/ui/login", data={"key": "guess"}) as response:
            assert response.status == 401
            assert "That is not the key" in await response.text()
        assert time.monotonic() - started >= FIRST_DELAY_S
        async with http.get(f"{base}/ui?tenant=acme") as response:
            assert response.status == 401


async def test_the_key_opens_a_session_until_signing_out(keyed: tuple[str, str]) -> None:
    base, _ = keyed
    async with session() as http:
        async with http.post(
            f"{base}/ui/login",
            data={"key": KEY, "next": "/ui?tenant=acme"},
            allow_redirects=False,
        ) as response:
            assert response.status == 303
            assert response.headers["Location"] == "/ui?tenant=acme"
            cookie = response.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        async with http.get(f"{base}/ui?tenant=acme") as response:
            body = await response.text()
            assert response.status == 200 and "heron" in body
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', body)
        assert token is not None
        async with http.post(
            f"{base}/ui/logout", data={"csrf_token": token.group(1)}, allow_redirects=False
        ) as response:
            assert response.status == 303
        async with http.get(f"{base}/ui?tenant=acme") as response:
            assert response.status == 401


async def test_signing_in_never_sends_anyone_elsewhere(keyed: tuple[str, str]) -> None:
    base, _ = keyed
    async with session() as http:
        for target in ("https://evil.example/ui", "//evil.example/ui", "/mcp"):
            async with http.post(
                f"{base}/ui/login", data={"key": KEY, "next": target}, allow_redirects=False
            ) as response:
                assert response.headers["Location"] == "/ui", target


async def test_mcp_still_wants_its_bearer(keyed: tuple[str, str]) -> None:
    _, mcp_url = keyed
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with session() as http, http.post(mcp_url, json=request) as response:
        assert response.status == 401
