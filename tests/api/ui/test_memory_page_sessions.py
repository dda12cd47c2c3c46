"""Sessions end where the server says so (issue 42, item 1): signing out revokes the session
on every process of a deployment, not only in the browser that held it, and a new key ends
every session. Two real ``--local`` processes share one data dir (one embedded database), as
two pods share one state store."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from services.api.main import SHUTDOWN_GRACE_S
from services.api.ui.access import SESSION_COOKIE
from services.api.ui.revocation import REVOCATION_CACHE_S
from tests.api._process import CONSOLE_SCRIPT, ApiProcess, clean_env, start, stop
from tests.conftest import _embedded_data_dir

KEY = "page-key-51ab"
TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]+)"')


@contextlib.asynccontextmanager
async def serving(data_dir: Path, key: str) -> AsyncIterator[str]:
    """The page's base URL of a --local process on ``data_dir`` with ``key``."""
    args = [str(CONSOLE_SCRIPT), "--local", "--data-dir", str(data_dir)]
    api: ApiProcess = await start(
        [*args, "--port", "0", "--ui-port", "0"], clean_env(MCP_API_KEY=key)
    )
    try:
        ui = await api.wait_for("ui_listening")
        yield ui["url"].removesuffix("/ui")
        api.process.send_signal(signal.SIGTERM)
        assert await api.exit_code(timeout_s=SHUTDOWN_GRACE_S) == 0
    finally:
        await stop(api)


@pytest.fixture(scope="module")
async def deployment() -> AsyncIterator[tuple[Path, str, str]]:
    """The shared data dir and the page URLs of two processes with the same key."""
    with _embedded_data_dir() as data_dir:
        async with serving(data_dir, KEY) as first, serving(data_dir, KEY) as second:
            yield data_dir, first, second


async def sign_in(base: str, key: str = KEY) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{base}/ui/login", data={"key": key}, allow_redirects=False) as response,
    ):
        assert response.status == 303
        morsel = response.cookies[SESSION_COOKIE]
        return morsel.value


async def page(base: str, cookie: str, path: str = "/ui") -> tuple[int, str]:
    headers = {"Cookie": f"{SESSION_COOKIE}={cookie}"}
    async with aiohttp.ClientSession() as http, http.get(f"{base}{path}", headers=headers) as got:
        return got.status, await got.text()


async def post(base: str, cookie: str, path: str, form: dict[str, str]) -> int:
    headers = {"Cookie": f"{SESSION_COOKIE}={cookie}"}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{base}{path}", data=form, headers=headers, allow_redirects=False) as got,
    ):
        return got.status


async def sign_out(base: str, cookie: str) -> str:
    """Sign out; the form token the session had."""
    status, body = await page(base, cookie)
    assert status == 200
    token = TOKEN.search(body)
    assert token is not None
    assert await post(base, cookie, "/ui/logout", {"csrf_token": token.group(1)}) == 303
    return token.group(1)


async def test_signing_out_ends_the_session_not_only_the_cookie(
    deployment: tuple[Path, str, str],
) -> None:
    _, base, _ = deployment
    cookie = await sign_in(base)
    token = await sign_out(base, cookie)
    # The old cookie, replayed (copied before signing out), reads and exports nothing.
    status, body = await page(base, cookie, "/ui?tenant=acme")
    assert status == 401 and "Sign in" in body
    form = {"tenant": "acme", "csrf_token": token}
    assert await post(base, cookie, "/ui/export", form) == 403


async def test_a_session_holds_on_every_process_and_ends_on_every_process(
    deployment: tuple[Path, str, str],
) -> None:
    _, first, second = deployment
    cookie = await sign_in(first)
    assert (await page(second, cookie))[0] == 200
    await sign_out(first, cookie)
    deadline = time.monotonic() + REVOCATION_CACHE_S + 3
    while (await page(second, cookie))[0] != 401:
        assert time.monotonic() < deadline, "the other process still accepts a revoked session"
        await asyncio.sleep(0.2)
    # Another session, on the same processes, is untouched.
    other = await sign_in(second)
    assert (await page(first, other))[0] == 200


async def test_a_new_key_ends_every_session(deployment: tuple[Path, str, str]) -> None:
    data_dir, first, _ = deployment
    cookie = await sign_in(first)
    async with serving(data_dir, "a-rotated-key-77") as rotated:
        assert (await page(rotated, cookie))[0] == 401
        assert (await page(rotated, await sign_in(rotated, "a-rotated-key-77")))[0] == 200
    assert (await page(first, cookie))[0] == 200
