"""Malformed requests before anyone signs in, on a real ``--local`` process with a key: every
header, cookie, body or encoding the page cannot read is a 4xx naming the part, never a 500 or
a dropped connection (issue 42, items 4 to 6)."""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator
from urllib.parse import urlencode

import pytest

from tests.api._process import ApiProcess, keyed_local_api
from tests.api.ui._raw import RawAnswer, address, request_head, send

KEY = "page-key-9d2e"


@pytest.fixture(scope="module")
async def keyed() -> AsyncIterator[tuple[str, str, ApiProcess]]:
    """The page's base URL, the MCP URL and the process of a --local server with a key."""
    async with keyed_local_api(KEY) as (api, mcp_url, page_url):
        yield page_url, mcp_url, api


def failures(api: ApiProcess) -> list[dict[str, object]]:
    return [event for event in api.events if event.get("event") == "ui_failed"]


def host_of(url: str) -> str:
    host, port = address(url)
    return f"{host}:{port}"


async def post_login(base: str, body: bytes, *headers: tuple[str, bytes | str]) -> RawAnswer:
    head = request_head("POST", "/ui/login", host_of(base), *headers, length=len(body))
    return await send(base, head, body)


@pytest.mark.parametrize(
    ("headers", "body", "status", "named"),
    [
        ([("Content-Type", "multipart/form-data")], b"key=x", 400, b"boundary"),
        ([("Content-Type", "multipart/form-data; boundary=zz")], b"garbage", 400, b"multipart"),
        (
            [("Content-Type", "application/x-www-form-urlencoded; charset=bogus")],
            b"key=x",
            400,
            b"charset",
        ),
        (
            [
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Content-Encoding", "gzip"),
            ],
            b"key=x",
            400,
            b"Content-Encoding",
        ),
        (
            [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", "http://[")],
            b"key=x",
            403,
            b"Origin",
        ),
        (
            [("Content-Type", "application/x-www-form-urlencoded"), ("Origin", b"http://\xff\xfe")],
            b"key=x",
            403,
            b"Origin",
        ),
    ],
    ids=[
        "no-boundary",
        "garbage-multipart",
        "bogus-charset",
        "false-gzip",
        "origin-[",
        "origin-FFFE",
    ],
)
async def test_an_unreadable_form_is_a_4xx_naming_the_part(
    keyed: tuple[str, str, ApiProcess],
    headers: list[tuple[str, bytes | str]],
    body: bytes,
    status: int,
    named: bytes,
) -> None:
    base, _, api = keyed
    before = len(failures(api))
    answer = await post_login(base, body, *headers)
    assert failures(api)[before:] == []
    assert answer.status == status, answer
    assert named in answer.body
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")


async def test_a_cookie_that_is_not_utf8_is_no_session_and_is_replaced(
    keyed: tuple[str, str, ApiProcess],
) -> None:
    base, _, api = keyed
    before = len(failures(api))
    cookie = ("Cookie", b"mcp_memory_ui=\xff\xfe.1.abc")
    answer = await send(base, request_head("GET", "/ui", host_of(base), cookie))
    assert answer.status == 401 and b"Sign in" in answer.body
    # Signing in over it works: the new session replaces it.
    body = urlencode({"key": KEY}).encode()
    form = ("Content-Type", "application/x-www-form-urlencoded")
    answer = await post_login(base, body, form, cookie)
    assert answer.status == 303 and "mcp_memory_ui=" in answer.headers["set-cookie"]
    assert failures(api)[before:] == []


@pytest.mark.parametrize("target", ["/ui\r\nX-Injected: 1", "/ui?tenant=acme\nSet-Cookie: x=1"])
async def test_a_control_character_in_next_sends_to_the_page(
    keyed: tuple[str, str, ApiProcess], target: str
) -> None:
    base, _, _ = keyed
    body = urlencode({"key": KEY, "next": target}).encode()
    answer = await post_login(base, body, ("Content-Type", "application/x-www-form-urlencoded"))
    assert answer.status == 303, answer
    assert answer.headers["location"] == "/ui"
    assert "x-injected" not in answer.headers


async def test_the_cookie_is_secure_behind_a_tls_proxy(keyed: tuple[str, str, ApiProcess]) -> None:
    base, _, _ = keyed
    body = urlencode({"key": KEY}).encode()
    form = ("Content-Type", "application/x-www-form-urlencoded")
    plain = await post_login(base, body, form)
    assert "secure" not in plain.headers["set-cookie"].lower()
    proxied = await post_login(base, body, form, ("X-Forwarded-Proto", "https"))
    assert "; secure" in proxied.headers["set-cookie"].lower()


async def test_no_answer_names_python_or_aiohttp(keyed: tuple[str, str, ApiProcess]) -> None:
    base, mcp_url, _ = keyed
    mcp_base = mcp_url.removesuffix("/mcp")
    for url, path in ((base, "/ui"), (base, "/nowhere"), (mcp_base, "/health"), (mcp_base, "/mcp")):
        answer = await send(url, request_head("GET", path, host_of(url)))
        assert answer.headers["server"] == "mcp-memory", (path, answer.headers)


SEARCH_WORD = "tangerineplans"
SECURITY = ("content-security-policy", "x-frame-options", "x-content-type-options")


def assert_ours(answer: RawAnswer) -> None:
    assert answer.headers["server"] == "mcp-memory"
    for name in SECURITY:
        assert name in answer.headers, (name, answer.headers)
    assert answer.headers["referrer-policy"] == "same-origin"
    assert SEARCH_WORD.encode() not in answer.body


def assert_no_trace(api: ApiProcess) -> None:
    """Nothing of a refused request line in the log, and no aiohttp free-text ERROR line."""
    for event in api.events:
        assert SEARCH_WORD not in json.dumps(event), event
        assert not str(event.get("event", "")).startswith("Error handling request"), event


@pytest.mark.parametrize("surface", ["ui", "mcp"])
async def test_a_request_aiohttp_refuses_gets_our_answer_and_leaves_no_trace(
    keyed: tuple[str, str, ApiProcess], surface: str
) -> None:
    base, mcp_url, api = keyed
    url, path = (base, "/ui") if surface == "ui" else (mcp_url.removesuffix("/mcp"), "/mcp")
    long_query = f"{path}?tenant=acme&q=" + (SEARCH_WORD + "+") * 7000  # ~100 KB
    too_long = await send(url, request_head("GET", long_query, host_of(url)))
    assert too_long.status == 400, too_long
    assert_ours(too_long)
    limit = b"32,768" if surface == "ui" else b"8,190"
    assert b"longer than " + limit + b" bytes" in too_long.body
    twice = await send(
        url, request_head("GET", f"{path}?q={SEARCH_WORD}", host_of(url), ("Host", "b.example"))
    )
    assert twice.status == 400, twice
    assert_ours(twice)
    assert b"Duplicate 'Host' header found" in html.unescape(twice.body.decode()).encode()
    if surface == "mcp":
        assert json.loads(too_long.body)["error"]["code"] == -32600
    assert_no_trace(api)
    refused = [e for e in api.events if e.get("event") == "http_refused"]
    assert refused and refused[-1] == {
        "level": "warning",
        "event": "http_refused",
        "status": 400,
        "type": "BadHttpMessage",
    }


async def test_a_long_non_ascii_search_within_the_limit_reaches_the_page(
    keyed: tuple[str, str, ApiProcess],
) -> None:
    base, _, api = keyed
    body = urlencode({"key": KEY}).encode()
    signed = await post_login(base, body, ("Content-Type", "application/x-www-form-urlencoded"))
    cookie = signed.headers["set-cookie"].split(";")[0]
    # 1,000 characters (the page's own limit) of 3-byte UTF-8: 9,000 bytes percent-encoded.
    target = "/ui?" + urlencode({"tenant": "acme", "q": "€" * 1000})
    assert len(target) > 9000
    answer = await send(
        base,
        request_head("GET", target, host_of(base), ("Cookie", cookie), ("Referer", base + target)),
    )
    assert answer.status == 200, answer.body[-400:]
    assert b"Search as recall does" in answer.body
    assert_no_trace(api)
