"""A question asked again is answered from the vectors kept, exactly as the model gave it; the
least recently asked goes first when the store is full."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared.embedding.interface import Embedder
from shared.embedding.local import LocalEmbedder
from shared.embedding.recent import RecentVectors


class Counted(Embedder):
    """The real model, with the texts it was asked to embed written down."""

    def __init__(self, model: Embedder) -> None:
        self._model = model
        self.model = model.model
        self.dim = model.dim
        self.asked: list[str] = []

    async def embed(self, text: str) -> list[float]:
        self.asked.append(text)
        return await self._model.embed(text)


@pytest.fixture(scope="module")
async def model() -> AsyncIterator[LocalEmbedder]:
    embedder = await LocalEmbedder.open()
    yield embedder
    await embedder.close()


async def test_a_question_asked_again_is_not_embedded_again(model: LocalEmbedder) -> None:
    counted = Counted(model)
    recent = RecentVectors(counted)
    first = await recent.embed("where are the nightly backups copied")
    again = await recent.embed("where are the nightly backups copied")
    assert again == first == await model.embed("where are the nightly backups copied")
    assert counted.asked == ["where are the nightly backups copied"]


async def test_the_least_recently_asked_is_dropped_first(model: LocalEmbedder) -> None:
    counted = Counted(model)
    recent = RecentVectors(counted, capacity=2)
    for question in ("one", "two", "one", "three", "one", "two"):
        await recent.embed(question)
    # "two" was the least recently asked when "three" came, so it is embedded again.
    assert counted.asked == ["one", "two", "three", "two"]
