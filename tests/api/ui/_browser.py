"""Debian's chromium, headless, driven over the DevTools protocol with aiohttp's websocket client.

Just enough of the protocol for the memory page's tests: open a tab, go to a URL and wait for
its load event, run an expression in the page and read its value, click what submits a form and
wait for the page that follows, take a screenshot, and let a download land in a folder.
``--host-resolver-rules`` makes a name resolve to 127.0.0.1 inside this browser only, which is
how a DNS-rebinding page reaches a loopback server.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAUNCH_TIMEOUT_S = 30.0
STEP_TIMEOUT_S = 20.0


class BrowserError(AssertionError):
    """The browser reported an error for a command, or did not answer in time."""


class Browser:
    """One chromium process and its DevTools websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._listeners: list[tuple[str, str | None, asyncio.Future[dict[str, Any]]]] = []
        self._queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
                continue
            queue = self._queues.get(data.get("method", ""))
            if queue is not None:
                queue.put_nowait(data.get("params", {}))
            for entry in list(self._listeners):
                method, session, future = entry
                if data.get("method") == method and session in (None, data.get("sessionId")):
                    self._listeners.remove(entry)
                    if not future.done():
                        future.set_result(data.get("params", {}))

    def expect(self, method: str, *, session: str | None = None) -> asyncio.Future[dict[str, Any]]:
        """A future for the next ``method`` event (of ``session``, when given)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._listeners.append((method, session, future))
        return future

    def subscribe(self, method: str) -> asyncio.Queue[dict[str, Any]]:
        """Every ``method`` event from now on, in order, from any session."""
        return self._queues.setdefault(method, asyncio.Queue())

    async def send(self, method: str, *, session: str | None = None, **params: Any) -> Any:
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        await self._ws.send_str(json.dumps(message))
        try:
            answer = await asyncio.wait_for(future, STEP_TIMEOUT_S)
        except TimeoutError:
            raise BrowserError(f"{method}: no answer in {STEP_TIMEOUT_S} s") from None
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    async def new_page(self) -> Page:
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        page = Page(self, attached["sessionId"])
        await page.send("Page.enable")
        return page

    async def allow_downloads(self, folder: Path) -> None:
        await self.send(
            "Browser.setDownloadBehavior",
            behavior="allow",
            downloadPath=str(folder),
            eventsEnabled=True,
        )

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


class Page:
    """One tab, addressed by its flat DevTools session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self._browser = browser
        self._session = session

    async def send(self, method: str, **params: Any) -> Any:
        return await self._browser.send(method, session=self._session, **params)

    async def _next_document(self, navigate: Callable[[], Awaitable[Any]]) -> None:
        """Run ``navigate`` and wait until a new document has loaded: the old one is marked
        first, so a load event the old one fired late cannot be mistaken for the new one's."""
        await self.evaluate("window.__previous_document = true")
        await navigate()
        deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT_S
        while asyncio.get_running_loop().time() < deadline:
            with contextlib.suppress(BrowserError):
                if await self.evaluate(
                    "window.__previous_document === undefined && document.readyState === 'complete'"
                ):
                    return
            await asyncio.sleep(0.05)
        raise BrowserError(f"no new page loaded in {STEP_TIMEOUT_S} s")

    async def goto(self, url: str) -> None:
        async def navigate() -> None:
            result = await self.send("Page.navigate", url=url)
            if result.get("errorText"):
                raise BrowserError(f"navigating to {url}: {result['errorText']}")

        await self._next_document(navigate)

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (DevTools runs it whatever the
        page's own Content-Security-Policy allows, as the console does)."""
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def click_and_wait(self, selector: str) -> None:
        """Click the element (a form's submit button or a link) and wait for the next page."""
        await self._next_document(
            lambda: self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")
        )

    async def text(self, selector: str = "body") -> str:
        value = await self.evaluate(f"document.querySelector({json.dumps(selector)}).innerText")
        return str(value)

    async def url(self) -> str:
        return str(await self.evaluate("location.href"))

    async def screenshot(self, path: Path) -> None:
        result = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(result["data"]))


async def _devtools_url(process: asyncio.subprocess.Process) -> str:
    assert process.stderr is not None
    async for raw in process.stderr:
        line = raw.decode(errors="replace")
        if "DevTools listening on " in line:
            return line.split("DevTools listening on ", 1)[1].strip()
    raise BrowserError(f"chromium exited ({process.returncode}) before offering DevTools")


@contextlib.asynccontextmanager
async def launch(*, host_rules: str | None = None) -> AsyncIterator[Browser]:
    """A headless chromium with a fresh profile, closed (and its profile removed) after."""
    assert CHROMIUM is not None
    profile = Path(tempfile.mkdtemp(prefix="mcp-memory-chromium-"))
    args = [
        CHROMIUM,
        "--headless",
        # Root in CI has no user namespace for the sandbox; the pages are our own.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--remote-debugging-port=0",
        "--window-size=1200,900",
        f"--user-data-dir={profile}",
    ]
    if host_rules is not None:
        args.append(f"--host-resolver-rules={host_rules}")
    process = await asyncio.create_subprocess_exec(
        *args, "about:blank", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    drain: asyncio.Task[None] | None = None
    try:
        url = await asyncio.wait_for(_devtools_url(process), LAUNCH_TIMEOUT_S)
        # Keep reading stderr so chromium never blocks on a full pipe.
        drain = asyncio.create_task(_drain(process))
        async with (
            aiohttp.ClientSession() as http,
            http.ws_connect(url, max_msg_size=0) as ws,
        ):
            browser = Browser(ws)
            try:
                yield browser
            finally:
                await browser.close()
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
        if drain is not None:
            drain.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await drain
        shutil.rmtree(profile, ignore_errors=True)


async def _drain(process: asyncio.subprocess.Process) -> None:
    assert process.stderr is not None
    async for _ in process.stderr:
        pass


__all__ = ["CHROMIUM", "Browser", "BrowserError", "Page", "launch"]
