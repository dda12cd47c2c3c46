"""Topic words find their memories, end to end: the official MCP client over HTTP against the
real runtime on PostgreSQL and on S3 (moto and the S3 Vectors fake), with the local model.

A memory remembered with a category and tags is recalled by one of them asked alone, whether
or not its text says the word, in a small project where the label is far from rare; and the
labels make no question about something not stored come back HIGH.
"""

from __future__ import annotations

import pytest

from tests.api.test_recall_quality_e2e import harbor, remember_project_facts
from tests.api.test_tools_e2e import (  # noqa: F401  (fixtures, registered by import)
    _tenant_per_test,
    call,
    ids_in,
    text_of,
)
from tests.api.test_tools_e2e import memory_url as memory_url  # the module's server fixture

# (content, category, tags): the labels are words the text never uses, and one it does.
FILED = [
    (
        "Postgres connections go through pgbouncer in transaction mode, 200 at most.",
        "database",
        ["pooling"],
    ),
    (
        "Never log request bodies: they can contain card numbers.",
        "security",
        ["observability", "logging"],
    ),
    (
        "Dashboards for the API live in Grafana under the folder 'harbor-api'.",
        "operations",
        ["observability"],
    ),
    (
        "The staging database is refreshed from a production snapshot every Sunday.",
        "database",
        ["staging"],
    ),
]


async def remember_filed(url: str) -> list[str]:
    ids = []
    for content, category, tags in FILED:
        result = await call(
            url, "remember", {"content": content, "category": category, "tags": tags}
        )
        assert not result.is_error, text_of(result)
        ids.append(ids_in(text_of(result))[0])
    return ids


async def recall(url: str, query: str) -> str:
    result = await call(url, "recall", {"query": query})
    assert not result.is_error, text_of(result)
    return text_of(result)


@pytest.mark.parametrize("query", ["database", "observability", "Observability?"])
async def test_a_category_or_tag_asked_alone_finds_every_memory_filed_under_it(
    memory_url: str, query: str
) -> None:
    await remember_project_facts(memory_url, 6)
    pool, logs, dashboards, staging = await remember_filed(memory_url)
    filed = {"database": {pool, staging}, "observability": {logs, dashboards}}
    expected = filed[query.strip("?").lower()]
    text = await recall(memory_url, query)
    found = ids_in(text)
    # Filed under it first, whatever else mentions the word.
    assert set(found[: len(expected)]) == expected, text
    assert "HIGH CONFIDENCE" not in text


async def test_labels_make_no_question_about_nothing_stored_high(memory_url: str) -> None:
    await remember_project_facts(memory_url, 12)
    await remember_filed(memory_url)
    not_stored = harbor()["not_stored"]
    assert isinstance(not_stored, list)
    for question in not_stored:
        text = await recall(memory_url, str(question))
        assert "HIGH CONFIDENCE" not in text, (question, text)
