"""The embedding model's reading of what short facts say of whom they name
(``shared.ranking.relations``), kept for the facts read lately.

Ranking is pure, so a recall ranks with the readings it has, and when its ranking asked for a
fact not read yet, the fact is read (one batch) and the recall ranks again. Only two facts of a
sentence that share a name and nothing else are ever asked about: a chat turn or a long message
never is, so the long chats and LoCoMo pay nothing (docs/benchmarks.md).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

import numpy as np
import numpy.typing as npt

from shared.embedding import Embedder
from shared.ranking.relations import relation_text

# About 1.5 KiB a relation at 384 dimensions (float32): a few MiB at most.
RELATION_TEXTS: Final = 2048

Vector = npt.NDArray[np.float32]


class RelationVectors:
    """The vectors of the last ``capacity`` relations read (``relation_text``), least recently
    used dropped first; ``alike_at``: the cosine from which two read the same."""

    def __init__(self, embedder: Embedder, *, alike_at: float, capacity: int = RELATION_TEXTS):
        self._embedder = embedder
        self._alike_at = alike_at
        self._capacity = capacity
        self._kept: OrderedDict[str, Vector] = OrderedDict()

    def reading(self) -> RelationReading:
        """One recall's reader: it notes the relations its ranking asked for and has not read."""
        return RelationReading(self)

    def alike(self, newer: str, older: str, unread: set[str]) -> bool | None:
        first, second = relation_text(newer), relation_text(older)
        first_vector, second_vector = self._kept.get(first), self._kept.get(second)
        if first_vector is None or second_vector is None:
            unread.update(text for text in (first, second) if text not in self._kept)
            return None
        self._kept.move_to_end(first)
        self._kept.move_to_end(second)
        return float(first_vector @ second_vector) >= self._alike_at

    async def read(self, texts: set[str]) -> None:
        wanted = sorted(text for text in texts if text not in self._kept)
        if not wanted:
            return
        vectors = await self._embedder.embed_many(wanted)
        for text, vector in zip(wanted, vectors, strict=True):
            self._kept[text] = np.asarray(vector, dtype=np.float32)
        while len(self._kept) > self._capacity:
            self._kept.popitem(last=False)


class RelationReading:
    """``RelationVectors`` as one recall's ranking asks it (``shared.ranking.RelationReader``)."""

    def __init__(self, vectors: RelationVectors) -> None:
        self._vectors = vectors
        self.unread: set[str] = set()

    def alike(self, newer: str, older: str) -> bool | None:
        return self._vectors.alike(newer, older, self.unread)

    async def read_unread(self) -> bool:
        """Read what the ranking asked for and was not read; whether there was any."""
        if not self.unread:
            return False
        await self._vectors.read(self.unread)
        self.unread = set()
        return True
