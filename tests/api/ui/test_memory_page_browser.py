"""The memory page in a real browser (Debian's chromium, headless) against a real ``--local``
process whose memories were stored through MCP: what a person sees, and that what they change
is what the tools then answer. Each view is saved as a screenshot in ``test-artifacts/ui/``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import mcp_types as types
import pytest

from services.api.ui.query import PageState, page_url
from tests.api.ui._browser import Browser, Page
from tests.api.ui.conftest import (
    CONVERSATION,
    LONG_RUNBOOK,
    NOTE,
    OTHER_TENANT,
    REBOUND_HOST,
    SECRET,
    SEEDS,
    TENANT,
    Seeded,
    call,
)

RANDOM_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def url_of(seeded: Seeded, **params: str) -> str:
    base = seeded.ui_url.removesuffix("/ui")
    return f"{base}/ui?{urlencode(params)}" if params else f"{base}/ui"


async def open_page(browser: Browser, url: str) -> Page:
    page = await browser.new_page()
    await page.goto(url)
    return page


async def listed_ids(page: Page) -> list[str]:
    ids = await page.evaluate("[...document.querySelectorAll('.memory')].map(e => e.dataset.id)")
    return list(ids)


async def listed_result_ids(page: Page) -> list[str]:
    ids = await page.evaluate("[...document.querySelectorAll('.result')].map(e => e.dataset.id)")
    return list(ids)


def text_of(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_the_list_is_newest_first_with_facets_and_a_picture(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    page = await open_page(browser, url_of(seeded, tenant=TENANT))
    oldest_first = [seeded.ids[content] for content, *_ in SEEDS]
    assert await listed_ids(page) == oldest_first[::-1]
    body = await page.text()
    # Type, category, tags, dates and use are shown with each memory.
    first = await page.text(".memory")
    assert "project" in first and "#ops" in first and "#legacy" in first
    assert "stored " in first and "used 0×" in first
    assert await page.evaluate("document.querySelectorAll('svg rect.t-project').length") >= 1
    # Never another tenant's memory, nor a conversation's note without its conversation.
    assert SECRET not in body and "PERSIMMON" not in body
    assert NOTE not in body
    await page.screenshot(artifacts / "list.png")


async def test_filters_and_a_conversations_notes_are_in_the_url(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    page = await open_page(browser, url_of(seeded, tenant=TENANT, tag="deploy"))
    assert await listed_ids(page) == [seeded.id_of("We deploy")]
    page = await open_page(browser, url_of(seeded, tenant=TENANT, type="reference"))
    assert await listed_ids(page) == [seeded.id_of("Runbook")]
    page = await open_page(browser, url_of(seeded, tenant=TENANT, category="decision"))
    assert await listed_ids(page) == [seeded.id_of("The API listens")]
    notes = url_of(seeded, tenant=TENANT, conversation=CONVERSATION, notes="1")
    page = await open_page(browser, notes)
    assert await listed_ids(page) == [seeded.note_id]
    assert NOTE in await page.text()
    await page.screenshot(artifacts / "notes.png")
    # The filter form writes the same URL a link would.
    await page.evaluate("document.querySelector('select[name=type]').value = 'conversation'")
    await page.click_and_wait(".filters button[type=submit]")
    query = parse_qs(urlsplit(await page.url()).query)
    assert query["type"] == ["conversation"] and query["notes"] == ["1"]
    assert await listed_ids(page) == [seeded.note_id]


async def test_a_search_ranks_as_recall_does_and_says_why(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    question = "which port does the memory page listen on"
    page = await open_page(browser, url_of(seeded, tenant=TENANT, q=question))
    shown = await page.evaluate("[...document.querySelectorAll('.result')].map(e => e.dataset.id)")
    assert shown[0] == seeded.id_of("The API listens")
    first = await page.text(".result")
    assert "meaning" in first and "keyword" in first and "recency & use" in first
    assert "matched words" in first and "port" in first
    assert any(level in first for level in ("HIGH", "MEDIUM", "LOW"))
    await page.screenshot(artifacts / "search.png")
    # The tool answers the same order: the page is another caller of the same ranking. (The
    # page first: a recall counts a use, which may move the tie-break the page would read.)
    recalled = await call(seeded.mcp_url, "recall", {"query": question, "max_tokens": 16000})
    assert recalled.structured_content is not None
    assert [r["id"] for r in recalled.structured_content["results"]] == shown

    # An exact name: the one memory holding it, its passage with the name marked.
    page = await open_page(browser, url_of(seeded, tenant=TENANT, q="E1042"))
    marked = await page.evaluate(
        "[...document.querySelectorAll('.result mark')].map(m => m.innerText)"
    )
    assert "E1042" in marked
    assert (await page.evaluate("document.querySelector('.result').dataset.id")) == seeded.id_of(
        "Runbook"
    )


async def test_a_memory_page_shows_it_whole_and_a_correction_keeps_its_history(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    runbook = seeded.id_of("Runbook")
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=runbook))
    assert await page.text("#content") == LONG_RUNBOOK
    old = seeded.id_of("Retry a failed")
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=old))
    corrected = "Retry a failed embedding call 5 times, with backoff, before giving up."
    await page.evaluate(
        f"document.querySelector('textarea[name=content]').value = {json.dumps(corrected)}"
    )
    await page.click_and_wait("form.replace button[type=submit]")
    assert "/ui?" in await page.url(), await page.text()
    new_id = parse_qs(urlsplit(await page.url()).query)["id"][0]
    assert new_id != old
    assert await page.text("#content") == corrected
    assert f"correction of {old}" in await page.text(".notice")
    history = await page.text("#versions")
    assert old in history and new_id in history and f"replaced by {new_id}" in history
    await page.screenshot(artifacts / "memory.png")
    # The tools see the correction: the old version is retired, both are in its history.
    versions = await call(seeded.mcp_url, "memory_history", {"id": old})
    assert new_id in text_of(versions) and old in text_of(versions)
    listed = await call(seeded.mcp_url, "list_memories", {"limit": 50})
    listed_ids = {m["id"] for m in (listed.structured_content or {})["memories"]}
    assert new_id in listed_ids and old not in listed_ids


async def test_forget_asks_first_then_the_tools_no_longer_find_it(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    doomed = seeded.id_of("The old staging database")
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=doomed))
    await page.click_and_wait("#forget-link")
    assert "Forget this memory?" in await page.text()
    await page.screenshot(artifacts / "forget.png")
    # Getting here changed nothing: the confirmation page is a GET.
    still = await call(seeded.mcp_url, "memory_get", {"id": doomed})
    assert "db-staging-7" in text_of(still)
    await page.click_and_wait("#forget-confirm")
    assert doomed in await page.text(".notice")
    assert doomed not in await listed_ids(page)
    gone = await call(seeded.mcp_url, "memory_get", {"id": doomed})
    assert f"No memory with id {doomed} is visible" in text_of(gone)
    recalled = await call(seeded.mcp_url, "recall", {"query": "old staging database"})
    assert doomed not in json.dumps(recalled.structured_content)


async def test_another_tenants_memory_reads_as_an_id_that_never_existed(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=seeded.secret_id))
    foreign = await page.text("main")
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=RANDOM_ID))
    random = await page.text("main")
    assert foreign.replace(seeded.secret_id, "<id>") == random.replace(RANDOM_ID, "<id>")
    assert "PERSIMMON" not in foreign
    await page.screenshot(artifacts / "missing.png")
    # Nor does a search or the list of one tenant reach into the other.
    page = await open_page(browser, url_of(seeded, tenant=TENANT, q="what is the vault code"))
    searched = await page.text("main")
    assert SECRET not in searched and seeded.secret_id not in searched
    page = await open_page(browser, url_of(seeded, tenant=OTHER_TENANT))
    assert await listed_ids(page) == [seeded.secret_id]


async def test_a_post_without_the_form_token_changes_nothing(
    browser: Browser, seeded: Seeded
) -> None:
    kept = seeded.id_of("We deploy")
    confirm = url_of(seeded, tenant=TENANT, id=kept, confirm="forget")
    page = await open_page(browser, confirm)
    await page.evaluate(
        "document.querySelectorAll('input[name=csrf_token]').forEach(e => e.remove())"
    )
    await page.click_and_wait("#forget-confirm")
    assert "token (csrf_token) is missing" in await page.text("#error")
    still = await call(seeded.mcp_url, "memory_get", {"id": kept})
    assert "make deploy ENV=prod" in text_of(still)


async def test_a_page_reached_by_another_name_is_refused(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    port = urlsplit(seeded.ui_url).port
    page = await open_page(browser, f"http://{REBOUND_HOST}:{port}/ui?tenant={TENANT}")
    body = await page.text()
    assert f"Host header '{REBOUND_HOST}:{port}' is not a loopback name" in body
    assert "make deploy" not in body
    await page.screenshot(artifacts / "foreign-host.png")


async def test_export_downloads_the_tenant_as_json_lines(
    browser: Browser, seeded: Seeded, tmp_path: Path
) -> None:
    await browser.allow_downloads(tmp_path)
    progress = browser.subscribe("Browser.downloadProgress")
    page = await open_page(browser, url_of(seeded, tenant=OTHER_TENANT))
    await page.evaluate("document.querySelector('form[action=\"/ui/export\"] button').click()")
    while (await asyncio.wait_for(progress.get(), 20))["state"] != "completed":
        pass
    (exported,) = tmp_path.iterdir()
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert [record["id"] for record in records] == [seeded.secret_id]
    assert exported.name == f"{OTHER_TENANT}-memories.jsonl"


async def test_a_probable_update_is_shown_on_both_memories_pages(
    browser: Browser, seeded: Seeded, artifacts: Path
) -> None:
    old_text = "The staging cluster runs 3 API replicas."
    new_text = "The staging cluster runs 5 API replicas now."
    old = text_of(await call(seeded.mcp_url, "remember", {"content": old_text}))
    new = text_of(await call(seeded.mcp_url, "remember", {"content": new_text}))
    old_id, new_id = old.split("Stored as ")[1][:26], new.split("Stored as ")[1][:26]
    assert f"It probably updates {old_id}" in new
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=old_id))
    outdated = await page.text("#superseded-by")
    assert outdated.startswith("Probably outdated: ") and new_id in outdated
    await page.screenshot(artifacts / "memory-outdated.png")
    page = await open_page(browser, url_of(seeded, tenant=TENANT, id=new_id))
    assert old_id in await page.text("#supersedes")
    # The search ranks as recall does: the newer first, the older labelled.
    page = await open_page(browser, url_of(seeded, tenant=TENANT, q="how many API replicas"))
    ranked = await listed_result_ids(page)
    assert ranked.index(new_id) + 1 == ranked.index(old_id)
    assert new_id in await page.text(f'.result[data-id="{old_id}"] .outdated')


def test_urls_hold_the_whole_state() -> None:
    state = PageState(tenant=TENANT, conversation=CONVERSATION, tag="ops", cursor=RANDOM_ID)
    assert page_url(state) == (
        f"/ui?tenant={TENANT}&conversation=chat%3Aui-1&tag=ops&cursor={RANDOM_ID}"
    )
    assert state.url(tag=None, cursor=None) == f"/ui?tenant={TENANT}&conversation=chat%3Aui-1"


async def test_the_log_never_holds_a_memory_or_a_query(seeded: Seeded) -> None:
    logged = json.dumps(seeded.api.events)
    for needle in ("make deploy", "PERSIMMON", "Tangerine", "db-staging-7", "which port", "E1042"):
        assert needle not in logged, needle
    requests = [e for e in seeded.api.events if e.get("event") == "ui_request"]
    assert requests and all("?" not in e["path"] for e in requests)
    assert "Traceback" not in logged


pytestmark = pytest.mark.timeout(120)
