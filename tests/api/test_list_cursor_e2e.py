"""list_memories walked with its cursor and filtered, end to end: the official MCP client over
HTTP against the real runtime on PostgreSQL and on S3 (moto and the S3 Vectors fake), with the
local model. The walk is the issue's target: 300 memories, each seen exactly once while 50 more
are written, and the answer always saying how to get the next page or that there is none."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.api.conftest import mcp_session
from tests.api.test_tools_e2e import (  # noqa: F401  (fixtures, registered by import)
    TENANT,
    _tenant_per_test,
    call,
    ids_in,
    text_of,
)
from tests.api.test_tools_e2e import memory_url as memory_url  # the module's server fixture

WORDS = (
    "amber basalt cobalt delta ember fjord garnet harbor indigo juniper kelp lagoon meadow "
    "nickel onyx pewter quartz raven saffron tundra umber velvet walnut xenon yarrow zephyr "
    "anchor beacon canyon dune estuary falcon glacier heron island jasper kestrel lantern "
    "marble nebula orchid prairie quiver ridge summit thistle upland valley willow yonder "
    "acorn bramble cedar dahlia elm fern gorse hazel iris jade kale lichen maple nettle oak "
    "poppy quince rowan sorrel tansy ulex vetch wheat yew zinnia"
).split()
ORIGINAL = 300
DURING = 50
PAGE = 20


def fact(n: int) -> str:
    """A fact no other ``fact(m)`` repeats: few shared words, so none is 'already known'."""
    chosen = random.Random(n).sample(WORDS, 7)
    return f"Fixture {n}: the {chosen[0]} service keeps {' '.join(chosen[1:])} at shelf {n * 7}."


async def remember(client: Client, n: int, **labels: Any) -> str:
    result = await client.call_tool("remember", {"content": fact(n), **labels})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None and result.structured_content["stored"]
    return str(result.structured_content["id"])


async def listed(client: Client, **arguments: Any) -> tuple[list[str], str | None, str]:
    """The ids a list_memories call shows, its next cursor (structured) and its text."""
    result = await client.call_tool("list_memories", arguments)
    text = text_of(result)
    assert not result.is_error, text
    data = result.structured_content
    assert data is not None
    ids = [memory["id"] for memory in data["memories"]]
    assert ids == ids_in(text)
    return ids, data["next_cursor"], text


async def test_a_walk_of_300_sees_each_once_while_50_more_are_written(memory_url: str) -> None:
    async with (
        mcp_session(memory_url, headers=TENANT) as client,
        mcp_session(memory_url, headers=TENANT) as writer,
    ):
        originals = [await remember(client, n) for n in range(ORIGINAL)]
        seen: list[str] = []
        cursor: str | None = None
        written = 0
        pages = 0
        while True:
            arguments: dict[str, Any] = {"limit": PAGE}
            if cursor is not None:
                arguments["cursor"] = cursor
            # Each page after the first is asked for while another client writes up to four
            # more, until fifty. (One written while the first page is read may be on it: the
            # walk has no position yet, and that memory was there when it took one.)
            first = cursor is None
            batch = range(ORIGINAL + written, ORIGINAL + min(written + 4, DURING))
            batch = range(0) if first else batch
            page = asyncio.ensure_future(listed(client, **arguments))
            await asyncio.gather(*(remember(writer, n) for n in batch))
            ids, cursor, text = await page
            written += len(batch)
            seen += ids
            pages += 1
            if cursor is None:
                assert text.endswith("No more pages: that is every memory that matches.")
                break
            assert f'cursor "{cursor}"' in text and "same filters" in text
        assert written == DURING
        assert len(seen) == len(set(seen)) == ORIGINAL
        assert seen == originals[::-1]
        assert pages == ORIGINAL // PAGE
        # A walk begun now sees the fifty too.
        everything: list[str] = []
        cursor = None
        while True:
            ids, cursor, _ = await listed(
                client, limit=50, **({"cursor": cursor} if cursor else {})
            )
            everything += ids
            if cursor is None:
                break
        assert len(everything) == len(set(everything)) == ORIGINAL + DURING


async def test_category_tag_and_dates_select_what_they_name(memory_url: str) -> None:
    async with mcp_session(memory_url, headers=TENANT) as client:
        ids = [
            await remember(client, 1, category="decision", tags=["ops"]),
            await remember(client, 2, category="runbook", tags=["ops", "db"]),
            await remember(client, 3, category="decision"),
            await remember(client, 4, tags=["db"]),
        ]
        newest_first = ids[::-1]
        _, _, everything = await listed(client)
        assert ids_in(everything) == newest_first
        assert (await listed(client, category="decision"))[0] == [ids[2], ids[0]]
        assert (await listed(client, tag="db"))[0] == [ids[3], ids[1]]
        assert (await listed(client, tag="ops", category="runbook"))[0] == [ids[1]]
        # A page of one under a filter hands on a cursor for the filter's next match.
        first, cursor, _ = await listed(client, tag="ops", limit=1)
        assert first == [ids[1]] and cursor is not None
        assert (await listed(client, tag="ops", limit=1, cursor=cursor))[:2] == ([ids[0]], None)
        # Dates: the second memory's own stored time, at or after and before it.
        result = await client.call_tool("memory_get", {"id": ids[1]})
        assert result.structured_content is not None
        stored = result.structured_content["memory"]["created_at"]
        assert (await listed(client, stored_after=stored))[0] == newest_first[:3]
        assert (await listed(client, stored_before=stored))[0] == [ids[0]]
        window = {"stored_after": stored, "stored_before": "2999-01-01"}
        assert (await listed(client, category="decision", **window))[0] == [ids[2]]
        assert (await listed(client, stored_after=stored[:10], tag="db"))[0] == [ids[3], ids[1]]
        # Bounds before 1970 or past what an id can carry mean "every memory" on that side.
        everything_dated = {
            "stored_after": "0001-01-01T00:00:00+01:00",
            "stored_before": "9999-12-31",
        }
        assert (await listed(client, **everything_dated))[0] == newest_first
        none, cursor, text = await listed(client, stored_before="1999-12-31")
        assert none == [] and cursor is None
        assert text == (
            "[MEMORY] No memories match these filters: stored before 1999-12-31T00:00:00.000Z."
        )


def refused_text(result: types.CallToolResult) -> str:
    text = text_of(result)
    assert result.is_error, text
    assert text.startswith("Error: "), text
    return text


@pytest.mark.parametrize(
    ("arguments", "field", "words"),
    [
        ({"cursor": "not-a-cursor"}, "cursor", "is not a cursor this server made"),
        ({"cursor": "x" * 1025}, "cursor", "at most 1024 bytes"),
        ({"stored_after": "yesterday"}, "stored_after", "must be an ISO 8601 date"),
        ({"stored_before": "2025-02-30"}, "stored_before", "such as 2025-01-31"),
        (
            {"stored_after": "2025-02-01", "stored_before": "2025-01-01"},
            "stored_after",
            "must be earlier than `stored_before`",
        ),
        (
            {"stored_after": "2025-01-01T00:00:00Z", "stored_before": "2025-01-01"},
            "stored_after",
            "must be earlier than `stored_before`",
        ),
        ({"category": "c" * 129}, "category", "it may be at most 128 bytes"),
        ({"tag": "é" * 33}, "tag", "66 bytes; it may be at most 64 bytes"),
        ({"tag": "  "}, "tag", "must be a non-empty string"),
    ],
)
async def test_each_bad_listing_argument_is_a_tool_error_naming_it(
    memory_url: str, arguments: dict[str, Any], field: str, words: str
) -> None:
    text = refused_text(await call(memory_url, "list_memories", arguments))
    assert f"`{field}`" in text and words in text, text


async def test_a_cursor_under_other_filters_is_refused_naming_them(memory_url: str) -> None:
    async with mcp_session(memory_url, headers=TENANT) as client:
        for n in range(3):
            await remember(client, n, category="decision", tags=["ops"])
        _, cursor, _ = await listed(client, category="decision", limit=1)
        assert cursor is not None
        result = await client.call_tool(
            "list_memories", {"category": "decision", "tag": "ops", "limit": 1, "cursor": cursor}
        )
        text = refused_text(result)
        assert "`cursor` was made for other filters (they differ in `tag`)" in text
        assert "repeat the filters of the call that returned it" in text
        # The same cursor with its own filters still works.
        ids, _, _ = await listed(client, category="decision", limit=1, cursor=cursor)
        assert len(ids) == 1
