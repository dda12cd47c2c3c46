"""Wrong keys cost their own address time, on ``/mcp`` and the memory page alike (issue 42,
item 2), on a real ``--local`` process with a key. Each test guesses from its own loopback
address (127.0.0.2, 127.0.0.3, ...: all of 127/8 reaches a server on 127.0.0.1), since the
count is kept per address and the process is shared."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator

import aiohttp
import msgspec
import pytest

from services.api.http.throttle import FIRST_DELAY_S, LOCKOUT_AFTER, LOCKOUT_S
from tests.api._process import ApiProcess, keyed_local_api

KEY = "throttle-key-3c8a"
WRONG = "not-the-key-6f1d"
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


class Server(msgspec.Struct, frozen=True, kw_only=True):
    api: ApiProcess
    mcp_url: str
    ui_url: str


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[Server]:
    async with keyed_local_api(KEY) as (api, mcp_url, page_url):
        yield Server(api=api, mcp_url=mcp_url, ui_url=page_url)


def client_from(address: str) -> aiohttp.ClientSession:
    """A client whose connections come from ``address`` (no keep-alive: each request its own)."""
    connector = aiohttp.TCPConnector(local_addr=(address, 0), force_close=True)
    return aiohttp.ClientSession(connector=connector)


async def call_mcp(http: aiohttp.ClientSession, url: str, key: str) -> tuple[int, float, str]:
    """Status, seconds taken, and Retry-After ("" when none)."""
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    started = time.monotonic()
    async with http.post(url, json=LIST_TOOLS, headers=headers) as response:
        await response.read()
        return response.status, time.monotonic() - started, response.headers.get("Retry-After", "")


async def sign_in(http: aiohttp.ClientSession, base: str, key: str) -> tuple[int, float, str]:
    started = time.monotonic()
    async with http.post(f"{base}/ui/login", data={"key": key}, allow_redirects=False) as response:
        await response.read()
        return response.status, time.monotonic() - started, response.headers.get("Retry-After", "")


async def test_concurrent_wrong_keys_on_the_page_are_checked_one_at_a_time(
    server: Server,
) -> None:
    async with client_from("127.0.0.2") as http:
        started = time.monotonic()
        answers = await asyncio.gather(*(sign_in(http, server.ui_url, WRONG) for _ in range(60)))
        elapsed = time.monotonic() - started
    statuses = [status for status, _, _ in answers]
    # One guess is checked (and held); the rest are refused unchecked, at once, with a wait.
    assert statuses.count(401) <= 3, statuses
    assert statuses.count(429) >= 57, statuses
    assert all(int(retry) >= 1 for status, _, retry in answers if status == 429)
    assert elapsed < 5 * FIRST_DELAY_S + 3


async def test_concurrent_wrong_bearers_on_mcp_are_checked_one_at_a_time(server: Server) -> None:
    async with client_from("127.0.0.3") as http:
        answers = await asyncio.gather(*(call_mcp(http, server.mcp_url, WRONG) for _ in range(60)))
    statuses = [status for status, _, _ in answers]
    assert statuses.count(401) <= 3, statuses
    assert statuses.count(429) >= 57, statuses
    # A JSON-RPC error saying how long, as the header does.
    async with client_from("127.0.0.3") as http:
        headers = {"Authorization": f"Bearer {WRONG}"}
        held = asyncio.create_task(call_mcp(http, server.mcp_url, WRONG))
        await asyncio.sleep(0.2)
        async with http.post(server.mcp_url, json=LIST_TOOLS, headers=headers) as response:
            body = await response.json()
        await held
    assert response.status == 429
    assert body["error"]["code"] == -32005
    assert f"for {response.headers['Retry-After']} s" in body["error"]["message"]


async def guess_until_locked(server: Server, address: str) -> list[int]:
    """Wrong keys from ``address``, alternating /mcp and the page, until it is locked out."""
    statuses: list[int] = []
    async with client_from(address) as http:
        for attempt in range(4 * LOCKOUT_AFTER):
            if attempt % 2:
                status, _, _ = await sign_in(http, server.ui_url, WRONG)
            else:
                status, _, _ = await call_mcp(http, server.mcp_url, WRONG)
            statuses.append(status)
            if statuses.count(401) >= LOCKOUT_AFTER:
                break
            if status == 429:
                await asyncio.sleep(0.1)
    return statuses


async def test_a_load_of_wrong_keys_from_one_address_does_not_slow_the_right_key_from_another(
    server: Server,
) -> None:
    guessing = asyncio.create_task(guess_until_locked(server, "127.0.0.4"))
    rightful: list[tuple[int, float, str]] = []
    async with client_from("127.0.0.5") as http:
        while not guessing.done():
            rightful.append(await call_mcp(http, server.mcp_url, KEY))
            rightful.append(await sign_in(http, server.ui_url, KEY))
            await asyncio.sleep(0.05)
    statuses = await guessing
    assert statuses.count(401) == LOCKOUT_AFTER, statuses
    # The rightful user elsewhere was answered at once, every time, throughout.
    assert len(rightful) >= 10
    assert {status for status, _, _ in rightful} == {200, 303}
    assert max(seconds for _, seconds, _ in rightful) < FIRST_DELAY_S
    # The guessing address is locked out, even with the right key, on both surfaces...
    async with client_from("127.0.0.4") as http:
        status, seconds, retry = await call_mcp(http, server.mcp_url, KEY)
        assert (status, int(retry)) == (429, LOCKOUT_S) or 0 < int(retry) <= LOCKOUT_S
        assert seconds < FIRST_DELAY_S
        status, _, retry = await sign_in(http, server.ui_url, KEY)
        assert status == 429 and 0 < int(retry) <= LOCKOUT_S
    # ...and said so in the log and the metrics, never with a key.
    lines = [e for e in server.api.events if e.get("event") in ("key_refused", "key_lockout")]
    assert {e["client"] for e in lines} >= {"127.0.0.4"}
    assert any(e["event"] == "key_lockout" and e["client"] == "127.0.0.4" for e in lines)
    assert all(WRONG not in json.dumps(e) and KEY not in json.dumps(e) for e in server.api.events)
    async with (
        aiohttp.ClientSession() as http,
        http.get(server.mcp_url.removesuffix("/mcp") + "/metrics") as response,
    ):
        metrics = await response.text()
    assert 'mcp_memory_auth_refusals_total{reason="wrong_key",surface="mcp"}' in metrics
    assert 'mcp_memory_auth_refusals_total{reason="locked_out",surface="ui"}' in metrics
    assert WRONG not in metrics and "127.0.0" not in metrics


async def test_the_right_key_clears_its_address(server: Server) -> None:
    async with client_from("127.0.0.6") as http:
        status, seconds, _ = await call_mcp(http, server.mcp_url, WRONG)
        assert status == 401 and seconds >= FIRST_DELAY_S
        assert (await call_mcp(http, server.mcp_url, KEY))[0] == 200
        status, seconds, _ = await call_mcp(http, server.mcp_url, WRONG)
        # Counted from one again: the first delay, not the second.
        assert status == 401 and FIRST_DELAY_S <= seconds < 2 * FIRST_DELAY_S


async def test_an_untrusted_peer_cannot_escape_its_count_by_naming_itself_anew(
    server: Server,
) -> None:
    # No TRUSTED_PROXIES: X-Forwarded-For is the guesser's own words, and ignored.
    statuses: list[int] = []
    async with client_from("127.0.0.7") as http:
        for n in range(LOCKOUT_AFTER + 1):
            headers = {"Authorization": f"Bearer {WRONG}", "X-Forwarded-For": f"198.51.100.{n}"}
            async with http.post(server.mcp_url, json=LIST_TOOLS, headers=headers) as response:
                statuses.append(response.status)
    assert statuses == [401] * LOCKOUT_AFTER + [429]


@pytest.fixture(scope="module")
async def proxied() -> AsyncIterator[Server]:
    """A server that trusts the proxy at 127.0.0.1 to name its clients."""
    async with keyed_local_api(KEY, TRUSTED_PROXIES="127.0.0.1") as (api, mcp_url, page_url):
        yield Server(api=api, mcp_url=mcp_url, ui_url=page_url)


async def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(proxied: Server) -> None:
    """Every request comes from the proxy (127.0.0.1); the guesser behind it is locked out and
    the rightful user behind the same proxy is not slowed."""

    async def through_proxy(client: str, key: str) -> tuple[int, float]:
        headers = {
            "Authorization": f"Bearer {key}",
            "Accept": "application/json, text/event-stream",
            # The guesser may prepend what it likes; the proxy appends the peer it saw.
            "X-Forwarded-For": f"10.9.9.9, {client}",
        }
        started = time.monotonic()
        async with (
            client_from("127.0.0.1") as http,
            http.post(proxied.mcp_url, json=LIST_TOOLS, headers=headers) as response,
        ):
            await response.read()
            return response.status, time.monotonic() - started

    statuses = [(await through_proxy("203.0.113.5", WRONG))[0] for _ in range(LOCKOUT_AFTER + 1)]
    assert statuses == [401] * LOCKOUT_AFTER + [429]
    status, seconds = await through_proxy("203.0.113.9", KEY)
    assert status == 200 and seconds < FIRST_DELAY_S
    assert (await through_proxy("203.0.113.5", KEY))[0] == 429
    lockout = [e for e in proxied.api.events if e.get("event") == "key_lockout"]
    assert [e["client"] for e in lockout] == ["203.0.113.5"]
