"""The memory page lists as list_memories does: the same filters (type, category, tag, stored
dates), the same pages and the same cursor, in a real browser against the ``--local`` process,
compared with what the tool answers over MCP for the same tenant."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from mcp import Client

from services.api.ui.views import PAGE_SIZE
from tests.api.conftest import mcp_session
from tests.api.test_list_cursor_e2e import fact
from tests.api.ui._browser import Browser, Page
from tests.api.ui.conftest import Seeded

# A tenant of this module's own, so the seeded tenant's lists stay as the other tests expect.
PAGED = "paging"
STORED = PAGE_SIZE + 5
# (category, tags) by the memory's number modulo 3.
LABELS: tuple[tuple[str | None, list[str]], ...] = (
    ("decision", ["ops"]),
    ("runbook", ["db"]),
    (None, ["ops", "db"]),
)


def url_of(seeded: Seeded, **params: str) -> str:
    return f"{seeded.ui_url.removesuffix('/ui')}/ui?{urlencode({'tenant': PAGED, **params})}"


async def listed_ids(page: Page) -> list[str]:
    ids = await page.evaluate("[...document.querySelectorAll('.memory')].map(e => e.dataset.id)")
    return list(ids)


async def tool_walk(
    client: Client, limit: int, **filters: Any
) -> list[tuple[list[str], str | None]]:
    """Every page list_memories answers under ``filters``: its ids and its next cursor."""
    pages: list[tuple[list[str], str | None]] = []
    cursor: str | None = None
    while True:
        arguments = {**filters, "limit": limit, **({"cursor": cursor} if cursor else {})}
        result = await client.call_tool("list_memories", arguments)
        assert not result.is_error and result.structured_content is not None, result
        data = result.structured_content
        cursor = data["next_cursor"]
        pages.append(([m["id"] for m in data["memories"]], cursor))
        if cursor is None:
            return pages


async def page_walk(browser: Browser, url: str) -> list[tuple[list[str], str | None]]:
    """Every page the memory page shows from ``url``, following "older →": its ids and the
    cursor its link carries."""
    page = await browser.new_page()
    await page.goto(url)
    pages: list[tuple[list[str], str | None]] = []
    while True:
        older = await page.evaluate("document.querySelector('a[rel=next]')?.href ?? null")
        cursor = parse_qs(urlsplit(older).query)["cursor"][0] if older else None
        pages.append((await listed_ids(page), cursor))
        if older is None:
            return pages
        await page.click_and_wait("a[rel=next]")


async def _seed(seeded: Seeded) -> list[str]:
    """The module's memories, stored once (the process is the package's), oldest first."""
    async with mcp_session(seeded.mcp_url, headers={"X-Memory-Tenant": PAGED}) as client:
        result = await client.call_tool("list_memories", {"limit": 50})
        assert result.structured_content is not None
        existing = [m["id"] for m in result.structured_content["memories"]]
        if existing:
            return existing[::-1]
        ids = []
        for n in range(STORED):
            category, tags = LABELS[n % 3]
            arguments: dict[str, Any] = {"content": fact(1000 + n), "tags": tags}
            if category is not None:
                arguments["category"] = category
            stored = await client.call_tool("remember", arguments)
            assert stored.structured_content is not None and stored.structured_content["stored"]
            ids.append(stored.structured_content["id"])
        return ids


async def test_the_page_pages_with_the_tools_cursor(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    oldest_first = await _seed(seeded)
    shown = await page_walk(browser, url_of(seeded))
    async with mcp_session(seeded.mcp_url, headers={"X-Memory-Tenant": PAGED}) as client:
        answered = await tool_walk(client, PAGE_SIZE)
    # Two pages, the same ids in each and the same cursor between them.
    assert shown == answered
    assert [len(ids) for ids, _ in shown] == [PAGE_SIZE, STORED - PAGE_SIZE]
    assert [i for ids, _ in shown for i in ids] == oldest_first[::-1]
    page = await browser.new_page()
    await page.goto(url_of(seeded, cursor=str(shown[0][1])))
    await page.screenshot(artifacts / "list-older.png")
    assert "← newest" in await page.text(".pages")


async def test_the_pages_filters_agree_with_list_memories(browser: Browser, seeded: Seeded) -> None:
    await _seed(seeded)
    today = datetime.datetime.now(datetime.UTC).date()
    tomorrow = (today + datetime.timedelta(days=1)).isoformat()
    cases: list[dict[str, str]] = [
        {"category": "decision"},
        {"tag": "db"},
        {"tag": "ops", "category": "decision"},
        {"stored_after": today.isoformat()},
        {"stored_before": tomorrow, "tag": "ops"},
        {"stored_after": tomorrow},
        {"stored_before": today.isoformat()},
    ]
    async with mcp_session(seeded.mcp_url, headers={"X-Memory-Tenant": PAGED}) as client:
        for filters in cases:
            answered = await tool_walk(client, PAGE_SIZE, **filters)
            shown = await page_walk(browser, url_of(seeded, **filters))
            assert shown == answered, filters
    assert sum(len(ids) for ids, _ in await page_walk(browser, url_of(seeded, tag="db"))) == 20


async def test_the_date_fields_write_the_dates_into_the_url(
    browser: Browser, seeded: Seeded
) -> None:
    await _seed(seeded)
    page = await browser.new_page()
    await page.goto(url_of(seeded))
    tomorrow = (datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(days=1)).isoformat()
    await page.evaluate(f"document.querySelector('input[name=stored_after]').value = '{tomorrow}'")
    await page.click_and_wait(".filters button[type=submit]")
    query = parse_qs(urlsplit(await page.url()).query)
    assert query["stored_after"] == [tomorrow] and "cursor" not in query
    assert await listed_ids(page) == []
    assert "No memory matches these filters" in await page.text()
    assert await page.evaluate("document.querySelector('input[name=stored_after]').value") == (
        tomorrow
    )
