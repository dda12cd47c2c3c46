"""A long message that restates a figure in other words is linked to the one it updates, on both
backends (the servers of ``test_revisions_e2e``, real local embedder): the word rules say no,
the two sentences that hold the figure say the same thing by their embeddings. A long message
that gives a figure of the same kind about another thing is not linked."""

from __future__ import annotations

from shared.ranking.updates import probable_update
from tests.api.test_revisions_e2e import Servers, headers, servers, stored, tool
from tests.api.test_tools_e2e import ids_in

# The corrections' servers and tenant header, as this module's fixtures.
__all__ = ["headers", "servers"]

OLD = (
    "I'm trying to optimize the memory usage of my batch resume processing script, which "
    "currently uses around 250MB of peak memory. I've tried streaming the input files and "
    "dropping unused columns, but I'm not sure what else I can do to reduce it further. The "
    "script reads every resume from the upload folder, parses it with spaCy, and writes the "
    "extracted skills into the matching database."
)
NEW = (
    "I'm trying to optimize the batch resume processing memory usage, which is currently "
    "averaging around 140MB per session, and I want the logging to stay detailed when the "
    "matcher fails. The script still reads every resume from the upload folder and writes the "
    "extracted skills into the matching database, so most of the pipeline is unchanged."
)
# 140MB again, of the Docker image: a size of another thing.
OTHER = (
    "The Docker image we ship for the batch resume processing script is around 140MB on the "
    "slim base image, which keeps the deploys to the cluster quick. The script still reads "
    "every resume from the upload folder and writes the extracted skills into the matching "
    "database, so most of the pipeline is unchanged."
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
