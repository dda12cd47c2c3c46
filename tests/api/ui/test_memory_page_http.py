"""The memory page's gate and refusals over plain HTTP, against the same real process the browser
tests look at: headers on every answer, every bad value refused by name, and no change without
the session's form token from this page's own origin."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import mcp_types as types
import pytest

from services.api.http.protocol import CONTENT_SECURITY_POLICY
from tests.api.ui.conftest import TENANT, Seeded, call

TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    # unsafe: accept cookies from an IP address (127.0.0.1), as a browser does.
    async with aiohttp.ClientSession(
        cookie_jar=aiohttp.CookieJar(unsafe=True), raise_for_status=False
    ) as session:
        yield session


def base(seeded: Seeded) -> str:
    return seeded.ui_url.removesuffix("/ui")


async def token_of(http: aiohttp.ClientSession, seeded: Seeded) -> str:
    async with http.get(f"{base(seeded)}/ui?tenant={TENANT}") as response:
        assert response.status == 200
        match = TOKEN.search(await response.text())
    assert match is not None
    return match.group(1)


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize(
    ("query", "field", "limit"),
    [
        ("tenant=../etc", "tenant", "must start with a letter or digit"),
        (f"tenant={TENANT}&type=bogus", "type", "project, pattern, reference or conversation"),
        (f"tenant={TENANT}&q=x&limit=99", "limit", "between 1 and 50"),
        (f"tenant={TENANT}&q={'x' * 1001}", "q", "at most 1000 characters"),
        (f"tenant={TENANT}&id=nope", "id", "26 characters"),
        (f"tenant={TENANT}&cursor=nope", "cursor", "is not a cursor this server made"),
        (f"tenant={TENANT}&stored_before=31-01-2026", "stored_before", "ISO 8601"),
        (
            f"tenant={TENANT}&stored_after=2026-01-02&stored_before=2026-01-01",
            "stored_after",
            "earlier than `stored_before`",
        ),
        (f"tenant={TENANT}&category={'c' * 129}", "category", "at most 128 bytes"),
        (f"tenant={TENANT}&tag={'t' * 65}", "tag", "at most 64 bytes"),
        (f"tenant={TENANT}&notes=maybe", "notes", "1 or 0"),
        (f"tenant={TENANT}&mode=fast", "mode", "precision, balanced or exploratory"),
        (f"tenant={TENANT}&conversation=a%20b", "conversation", "printable ASCII"),
        (f"tenant={TENANT}&category=a%00b", "category", "NUL"),
    ],
)
async def test_a_bad_value_is_refused_by_name_with_its_limit(
    seeded: Seeded, http: aiohttp.ClientSession, query: str, field: str, limit: str
) -> None:
    async with http.get(f"{base(seeded)}/ui?{query}") as response:
        body = await response.text()
        assert response.status == 400, body
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    message = re.search(r'id="error">(.*?)</p>', body, re.S)
    assert message is not None
    assert field in message.group(1) and limit in message.group(1)
    assert "Traceback" not in body


@pytest.mark.parametrize(
    "path", ["/ui", f"/ui?tenant={TENANT}", "/ui/static/ui.css", "/ui/nowhere", "/ui?tenant=-"]
)
async def test_every_answer_carries_the_policy_and_is_never_cached(
    seeded: Seeded, http: aiohttp.ClientSession, path: str
) -> None:
    async with http.get(f"{base(seeded)}{path}") as response:
        assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        if path.endswith("nowhere"):
            assert response.status == 404


async def test_a_session_cookie_is_http_only_and_same_site_strict(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{base(seeded)}/ui") as response:
        cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui" in cookie


async def test_a_post_changes_nothing_without_this_sessions_token_from_this_origin(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    kept = seeded.id_of("The API listens")
    target = f"{base(seeded)}/ui/forget"
    form = {"tenant": TENANT, "id": kept}
    # No cookie, no token.
    async with aiohttp.ClientSession() as stranger, stranger.post(target, data=form) as response:
        assert response.status == 403
    token = await token_of(http, seeded)
    # A session, but no token; then a token of another session.
    async with http.post(target, data=form) as response:
        assert response.status == 403
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other:
        other_token = await token_of(other, seeded)
    async with http.post(target, data={**form, "csrf_token": other_token}) as response:
        assert response.status == 403
    # The right token, sent by another site's page.
    async with http.post(
        target, data={**form, "csrf_token": token}, headers={"Origin": "http://evil.example"}
    ) as response:
        body = await response.text()
        assert response.status == 403 and "another site" in body
    # A GET of an action is no way around it.
    async with http.get(f"{target}?tenant={TENANT}&id={kept}&csrf_token={token}") as response:
        assert response.status == 405
    still = await call(seeded.mcp_url, "memory_get", {"id": kept})
    assert "port 3000" in text_of(still)


async def test_a_correction_is_held_to_remembers_rules(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    token = await token_of(http, seeded)
    memory_id = seeded.id_of("The API listens")
    form = {"tenant": TENANT, "id": memory_id, "csrf_token": token}
    for content, expected in (
        ("   ", "`content` is required"),
        ("x" * 32_001, "it may be at most 32000 bytes"),
    ):
        async with http.post(
            f"{base(seeded)}/ui/replace", data={**form, "content": content}
        ) as response:
            body = await response.text()
            assert response.status == 400 and expected in body, body


async def test_export_of_a_tenant_with_nothing_says_so(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    token = await token_of(http, seeded)
    async with http.post(
        f"{base(seeded)}/ui/export", data={"tenant": "nobody-here", "csrf_token": token}
    ) as response:
        assert response.status == 404
        assert "has no memories" in await response.text()


async def test_a_loopback_page_answers_loopback_names_only(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    port = urlsplit(seeded.ui_url).port
    url = f"{base(seeded)}/ui?tenant={TENANT}"
    async with http.get(url, headers={"Host": f"evil.example:{port}"}) as response:
        assert response.status == 421
        assert "is not a loopback name" in (await response.json())["error"]["message"]
    async with http.get(url, headers={"Host": f"localhost:{port}"}) as response:
        assert response.status == 200


async def test_the_root_leads_to_the_page(seeded: Seeded, http: aiohttp.ClientSession) -> None:
    async with http.get(f"{base(seeded)}/", allow_redirects=False) as response:
        assert response.status == 302 and response.headers["Location"] == "/ui"


async def test_only_a_page_under_ui_opens_a_session(
    seeded: Seeded, http: aiohttp.ClientSession
) -> None:
    # The cookie's path is /ui: a visit to / or a 404 elsewhere carries none, and a session
    # issued there would replace the one whose token the forms in other tabs hold.
    for path in ("/", "/nowhere", "/favicon.ico"):
        async with http.get(f"{base(seeded)}{path}", allow_redirects=False) as response:
            assert "Set-Cookie" not in response.headers, path
    async with http.get(f"{base(seeded)}/ui") as response:
        assert response.status == 200 and "Set-Cookie" in response.headers
