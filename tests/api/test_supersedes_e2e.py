"""Probable updates end to end, on both backends: remember links a fact that restates an older
one with another value, recall ranks the newer first and labels the older, the caller can undo
the link, memory_get and memory_history show it both ways, export and import carry it, and
nothing links across tenants or conversations. The official MCP client over real HTTP, the
servers of ``test_revisions_e2e`` (PostgreSQL, then S3 through moto and the S3 Vectors fake)."""

from __future__ import annotations

import pytest

from shared.embedding import open_embedder
from shared.model.keys import link_key
from shared.transfer import Importer, encode_line, export_tenant
from tests.api.test_revisions_e2e import (
    Servers,
    headers,
    refused,
    same_stores,
    servers,
    stored,
    tool,
)
from tests.api.test_tools_e2e import call, ids_in

# The corrections' servers and tenant header, as this module's fixtures.
__all__ = ["headers", "servers"]

OLD = "The frontend is built with webpack."
NEW = "The frontend is built with vite since the rewrite."
QUERY = "what builds the frontend"


async def recall_data(url: str, headers: dict[str, str], query: str) -> dict[str, object]:
    result = await call(url, "recall", {"query": query, "mode": "exploratory"}, headers=headers)
    assert not result.is_error
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_an_update_is_linked_ranked_first_and_its_older_version_labelled(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, OLD)
    answer = await tool(url, "remember", {"content": NEW}, headers)
    new = ids_in(answer)[0]
    assert f"It probably updates {old} (stored " in answer and f'"{OLD}"' in answer
    assert f"replaces={old}" in answer and "supersedes: false" in answer
    text = await tool(url, "recall", {"query": QUERY}, headers)
    assert ids_in(text)[:2] == [new, old]
    assert f"PROBABLY OUTDATED: {new} (stored " in text and f"probably updates {old}" in text
    data = await recall_data(url, headers, QUERY)
    results = data["results"]
    assert isinstance(results, list)
    first, second = results[0], results[1]
    assert first["id"] == new and first["supersedes"] == [old] and first["superseded_by"] == []
    assert second["id"] == old and second["supersedes"] == []
    assert second["superseded_by"] == [{"id": new, "created_at": first["created_at"]}]
    # The older memory stays current: listed and counted.
    assert ids_in(await tool(url, "list_memories", {}, headers)) == [new, old]


async def test_the_newer_version_stands_with_the_older_one_in_a_strict_mode(
    servers: Servers, headers: dict[str, str]
) -> None:
    """precision keeps only results near the top: the older one, worded like the question,
    would keep the newer one out; the link brings it in, directly above."""
    url = servers.first
    old = await stored(url, headers, "Our main database is MySQL.")
    new = ids_in(
        await tool(
            url, "remember", {"content": "Our main database is PostgreSQL since March."}, headers
        )
    )[0]
    for mode in ("precision", "balanced"):
        text = await tool(
            url, "recall", {"query": "is our main database MySQL", "mode": mode}, headers
        )
        assert ids_in(text)[:2] == [new, old], (mode, text)


@pytest.mark.parametrize(
    ("older", "newer", "query"),
    [
        ("Anna was born in Oslo.", "Omar was born in Oslo.", "who was born in Oslo"),
        # The subject named inside the sentence, before its "is".
        (
            "The native language of Omar Haddad is Thai.",
            "The native language of Lucia Romero is Thai.",
            "what is the native language of Lucia Romero",
        ),
    ],
)
async def test_a_same_pattern_fact_about_another_subject_is_not_linked(
    servers: Servers, headers: dict[str, str], older: str, newer: str, query: str
) -> None:
    url = servers.first
    await stored(url, headers, older)
    answer = await tool(url, "remember", {"content": newer}, headers)
    assert "probably updates" not in answer
    text = await tool(url, "recall", {"query": query}, headers)
    assert "PROBABLY OUTDATED" not in text and "probably updates" not in text


async def test_a_subjects_own_earlier_fact_is_linked_among_many_of_its_pattern(
    servers: Servers, headers: dict[str, str]
) -> None:
    """The five nearest memories of "Hugo Bernard works for Nokia." are other people's facts of
    its pattern; his own earlier employer, which shares his name and "works", is found by its
    words and linked. Another relation of his is not, nor another person's fact of a pattern."""
    url = servers.first
    old = await stored(url, headers, "Hugo Bernard works for the European Space Agency.")
    await stored(url, headers, "Hugo Bernard lives in Lisbon.")
    for person in ("Felix Wagner", "Ravi Patel", "Lena Fischer", "Arjun Mehta", "Jonas Berg"):
        await stored(url, headers, f"{person} works for Nokia.")
    answer = await tool(url, "remember", {"content": "Hugo Bernard works for Nokia."}, headers)
    assert f"It probably updates {old} (stored " in answer, answer
    new = ids_in(answer)[0]
    text = await tool(url, "recall", {"query": "Who does Hugo Bernard work for?"}, headers)
    # The newer first, the older directly below it, labelled.
    assert ids_in(text)[:2] == [new, old], text
    assert f"PROBABLY OUTDATED: {new} (stored " in text
    sport = "Hugo Bernard's favourite sport is now tennis."
    assert "probably updates" not in await tool(url, "remember", {"content": sport}, headers)


async def test_supersedes_false_stores_without_a_link_and_undoes_one_already_made(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, OLD)
    unlinked = await tool(url, "remember", {"content": NEW, "supersedes": False}, headers)
    assert unlinked.startswith("[MEMORY] Stored as ") and "probably updates" not in unlinked
    assert "PROBABLY OUTDATED" not in await tool(url, "recall", {"query": QUERY}, headers)
    # Linked by a second fact, then undone by sending that fact again with supersedes: false.
    later = "The frontend is built with rspack now."
    linked = await tool(url, "remember", {"content": later}, headers)
    newest = ids_in(linked)[0]
    assert "It probably updates " in linked
    undone = await tool(url, "remember", {"content": later, "supersedes": False}, headers)
    assert undone.startswith("[MEMORY] Already known") and "Undid its link to " in undone
    assert ids_in(undone)[0] == newest
    text = await tool(url, "recall", {"query": QUERY, "mode": "exploratory"}, headers)
    assert "PROBABLY OUTDATED" not in text and old in ids_in(text)
    got = await call(url, "memory_get", {"id": newest}, headers=headers)
    assert got.structured_content is not None and got.structured_content["supersedes"] == []


async def test_memory_get_and_history_show_the_link_both_ways(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, OLD)
    new = ids_in(await tool(url, "remember", {"content": NEW}, headers))[0]
    older = await call(url, "memory_get", {"id": old}, headers=headers)
    newer = await call(url, "memory_get", {"id": new}, headers=headers)
    assert older.structured_content is not None and newer.structured_content is not None
    assert [v["id"] for v in older.structured_content["superseded_by"]] == [new]
    assert newer.structured_content["supersedes"] == [old]
    assert f"PROBABLY OUTDATED: {new}" in older.content[0].text  # type: ignore[union-attr]
    assert f"probably updates {old}" in newer.content[0].text  # type: ignore[union-attr]
    history = await tool(url, "memory_history", {"id": old}, headers)
    assert f"PROBABLY OUTDATED: {new}" in history and "status: current" in history


async def test_nothing_is_linked_across_tenants_or_conversations(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    await stored(url, headers, OLD)
    other_tenant = {"X-Memory-Tenant": headers["X-Memory-Tenant"] + "-other"}
    assert "probably updates" not in await tool(url, "remember", {"content": NEW}, other_tenant)
    in_a = {**headers, "X-Conversation-Id": "chat:a"}
    in_b = {**headers, "X-Conversation-Id": "chat:b"}
    note = "The API listens on port 8080 in my sandbox."
    await stored(url, in_a, note, scope="conversation")
    answer = await tool(
        url,
        "remember",
        {"content": "The API listens on port 9090 in my sandbox now.", "scope": "conversation"},
        in_b,
    )
    assert "probably updates" not in answer
    # A note never stands in for a project memory: the project memory is not linked to it.
    project = await stored(url, headers, "The cache TTL is 5 minutes.")
    scoped = await tool(
        url, "remember", {"content": "The cache TTL is 15 minutes.", "scope": "conversation"}, in_a
    )
    assert "probably updates" not in scoped
    assert "PROBABLY OUTDATED" not in await tool(url, "memory_get", {"id": project}, headers)


async def test_a_crash_between_the_memory_and_its_link_leaves_both_current_everywhere(
    servers: Servers, headers: dict[str, str]
) -> None:
    """The link record is written after the memory: a crash in between leaves the memory
    without it (shown here by deleting the record), and recall, list and stats agree that
    both memories are current."""
    url = servers.first
    tenant = headers["X-Memory-Tenant"]
    old = await stored(url, headers, OLD)
    new = ids_in(await tool(url, "remember", {"content": NEW}, headers))[0]
    async with same_stores(servers) as (_, stores):
        await stores.objects.delete([link_key(tenant, old, new, "supersedes")])
    servers.clock.advance(61_000)  # past the process's cached view of the records
    text = await tool(url, "recall", {"query": QUERY, "mode": "exploratory"}, headers)
    assert set(ids_in(text)) == {old, new} and "PROBABLY OUTDATED" not in text
    assert set(ids_in(await tool(url, "list_memories", {}, headers))) == {old, new}
    assert "2 memories for this project" in await tool(url, "memory_stats", {}, headers)


async def test_export_and_import_carry_the_link(servers: Servers, headers: dict[str, str]) -> None:
    url = servers.first
    tenant = headers["X-Memory-Tenant"]
    old = await stored(url, headers, OLD)
    new = ids_in(await tool(url, "remember", {"content": NEW}, headers))[0]
    async with same_stores(servers) as (config, stores), open_embedder(config) as embedder:
        records = [r async for r in export_tenant(stores, tenant, now_ms=servers.clock())]
        assert {r.id: r.superseded_by for r in records} == {new: [], old: [new]}
        lines = [encode_line(r) for r in records]
        importer = Importer(stores, embedder, process_id="test", clock_ms=servers.clock)
        target = f"{tenant}-copy"
        await importer.lines(lambda: enumerate(lines, start=1), tenant=target)
    copied = {"X-Memory-Tenant": target}
    text = await tool(url, "recall", {"query": QUERY}, copied)
    assert ids_in(text)[:2] == [new, old] and f"PROBABLY OUTDATED: {new}" in text


@pytest.mark.parametrize("value", ["no", 0, [False]])
async def test_a_malformed_supersedes_is_refused_by_name_and_writes_nothing(
    servers: Servers, headers: dict[str, str], value: object
) -> None:
    url = servers.first
    text = await refused(url, "remember", {"content": NEW, "supersedes": value}, headers)
    assert "`supersedes`" in text
    assert "no memories yet" in await tool(url, "list_memories", {}, headers)
