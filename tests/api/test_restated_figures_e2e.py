"""A chat turn that restates a figure in other words is linked to the one it updates, on both
backends (the servers of ``test_revisions_e2e``, real local embedder): the word rules say no,
the two sentences that hold the figure say the same thing by their embeddings. A turn that gives
a figure of the same kind about another thing is not linked, nor is a long message, whose
newer version recall still puts first by reading the question."""

from __future__ import annotations

from shared.ranking.updates import probable_update
from tests.api.test_revisions_e2e import Servers, headers, servers, stored, tool
from tests.api.test_tools_e2e import ids_in

# The corrections' servers and tenant header, as this module's fixtures.
__all__ = ["headers", "servers"]

# Words both turns hold, so that they share enough to be about one thing.
CONTEXT = " It parses each resume with spaCy and writes the skills to the database."
OLD = (
    "I'm trying to optimize the memory usage of my batch resume processing script, which "
    "currently uses around 250MB of peak memory." + CONTEXT
)
NEW = (
    "I'm trying to optimize the batch resume processing memory usage, which is currently "
    "averaging around 140MB per session, and I want the logging to stay detailed." + CONTEXT
)
# 140MB again, of the Docker image: a size of another thing.
OTHER = (
    "The Docker image we ship for the batch resume processing script is around 140MB on the "
    "slim base image, which keeps deploys quick." + CONTEXT
)
# What makes a turn a long message: read sentence by sentence, never linked.
LONGER = (
    " I've tried streaming the input files and dropping unused columns, and the nightly job "
    "reports every failure to the team channel."
)
QUERY = "how much memory does the batch resume processing use per session"


def test_the_word_rules_alone_link_neither() -> None:
    assert probable_update(NEW, OLD) is None
    assert probable_update(OTHER, OLD) is None


async def test_a_figure_restated_in_other_words_is_linked_and_ranked_first(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, OLD)
    answer = await tool(url, "remember", {"content": NEW}, headers)
    new = ids_in(answer)[0]
    assert f"It probably updates {old} (stored " in answer
    text = await tool(url, "recall", {"query": QUERY, "mode": "exploratory"}, headers)
    assert ids_in(text)[:2] == [new, old]
    assert "PROBABLY OUTDATED" in text


async def test_a_figure_of_the_same_kind_about_another_thing_is_not_linked(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    await stored(url, headers, OLD)
    answer = await tool(url, "remember", {"content": OTHER}, headers)
    assert answer.startswith("[MEMORY] Stored as ") and "probably updates" not in answer
    text = await tool(url, "recall", {"query": QUERY, "mode": "exploratory"}, headers)
    assert "PROBABLY OUTDATED" not in text


async def test_a_long_message_is_not_linked_and_still_goes_first(
    servers: Servers, headers: dict[str, str]
) -> None:
    url = servers.first
    old = await stored(url, headers, OLD + LONGER)
    answer = await tool(url, "remember", {"content": NEW + LONGER}, headers)
    new = ids_in(answer)[0]
    assert answer.startswith("[MEMORY] Stored as ") and "probably updates" not in answer
    text = await tool(url, "recall", {"query": QUERY, "mode": "exploratory"}, headers)
    assert ids_in(text)[:2] == [new, old]
    assert "PROBABLY OUTDATED" not in text
