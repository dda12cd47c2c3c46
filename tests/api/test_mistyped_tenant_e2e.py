"""A mistyped tenant on one person's machine: the empty answers of recall, list_memories and
memory_stats, and the memory page's empty list, name the existing tenant it differs from by case
or a small typo; never with a key set, and never outside ``--local`` (tenant names are not to be
disclosed there). Real ``mcp-memory-api --local`` processes, the official MCP client."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Final

import aiohttp
import mcp_types as types
import pytest

from services.api.runtime import discloses_tenant_names
from shared.config import load_config
from tests.api._process import keyed_local_api, local_api
from tests.api.conftest import mcp_session

REAL: Final = "acme-webshop"
KEY: Final = "a-key-long-enough-for-the-server-1234"
FACTS: Final = (
    "We deploy the webshop with make deploy ENV=prod.",
    "The checkout service retries a failed payment twice.",
    "Product images live in the assets bucket.",
)
EMPTY: Final = "[MEMORY] This project has no memories yet."


def hint(name: str, memories: int) -> str:
    return (
        f" A project named `{name}` has {memories} memories — did you mean that tenant? "
        "(X-Memory-Tenant is case-sensitive)"
    )


async def call(
    url: str, tenant: str, tool: str, arguments: Mapping[str, object], key: str | None = None
) -> str:
    headers = {"X-Memory-Tenant": tenant}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    async with mcp_session(url, headers=headers) as client:
        result = await client.call_tool(tool, dict(arguments))
    assert not result.is_error, result
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def seed(url: str, key: str | None = None) -> None:
    for fact in FACTS:
        assert "Stored as" in await call(url, REAL, "remember", {"content": fact}, key)


async def empty_answers(url: str, tenant: str, key: str | None = None) -> list[str]:
    """The first line of recall's answer, then list_memories' and memory_stats' answers."""
    recalled = await call(url, tenant, "recall", {"query": "how do we deploy"}, key)
    listed = await call(url, tenant, "list_memories", {}, key)
    counted = await call(url, tenant, "memory_stats", {}, key)
    return [recalled.splitlines()[0], listed, counted]


def expected(tenant: str, tail: str) -> list[str]:
    return [
        f'[MEMORY] No memories stored for this project matched "how do we deploy".{tail}',
        f"{EMPTY}{tail}",
        f"{EMPTY}{tail}",
    ]


@pytest.fixture(scope="module")
async def local() -> AsyncIterator[tuple[str, str]]:
    """An unkeyed ``--local`` server with three memories in ``acme-webshop``: its MCP URL and
    its page's base URL."""
    async with local_api() as (_, mcp_url, base_url):
        await seed(mcp_url)
        yield mcp_url, base_url


async def test_a_tenant_differing_by_case_names_the_real_one(local: tuple[str, str]) -> None:
    answers = await empty_answers(local[0], "Acme-Webshop")
    assert answers == expected("Acme-Webshop", hint(REAL, 3))


async def test_a_small_typo_names_the_real_one(local: tuple[str, str]) -> None:
    answers = await empty_answers(local[0], "acme-webshp")
    assert answers == expected("acme-webshp", hint(REAL, 3))


async def test_an_unrelated_tenant_gets_no_hint(local: tuple[str, str]) -> None:
    assert await empty_answers(local[0], "zebra-farm") == expected("zebra-farm", "")


async def test_the_real_tenant_is_answered_as_ever(local: tuple[str, str]) -> None:
    counted = await call(local[0], REAL, "memory_stats", {})
    assert counted == "[MEMORY] 3 memories for this project (project: 3)."


def page_text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


async def test_the_page_names_the_real_tenant(local: tuple[str, str]) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{local[1]}/ui", params={"tenant": "Acme-Webshop"}) as response:
            assert response.status == 200
            mistyped = await response.text()
        async with http.get(f"{local[1]}/ui", params={"tenant": "zebra-farm"}) as response:
            unrelated = await response.text()
    assert (
        "This tenant has no memories yet. A tenant named acme-webshop has 3 memories — did you "
        "mean that tenant? (tenant names are case-sensitive)"
    ) in page_text(mistyped)
    assert 'href="/ui?tenant=acme-webshop"' in mistyped
    assert "did you mean" not in unrelated
    assert "This tenant has no memories yet." in page_text(unrelated)


async def test_no_hint_with_a_key_set() -> None:
    async with keyed_local_api(KEY) as (_, mcp_url, _):
        await seed(mcp_url, KEY)
        answers = await empty_answers(mcp_url, "Acme-Webshop", KEY)
    assert answers == expected("Acme-Webshop", "")


@pytest.mark.parametrize(
    ("environ", "local"),
    [
        ({"DATABASE_URL": "postgresql://db/memory"}, False),
        ({"VECTOR_BUCKET": "v", "STATE_BUCKET": "s"}, False),
        ({"HOST": "0.0.0.0"}, True),
        ({"MCP_API_KEY": KEY}, True),
    ],
)
def test_names_are_disclosed_on_one_persons_machine_only(
    environ: dict[str, str], local: bool
) -> None:
    assert not discloses_tenant_names(load_config(environ, local=local))
    assert discloses_tenant_names(load_config({}, local=True))
