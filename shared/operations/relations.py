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

from shared.embedding import Embedder, RelationLines
from shared.ranking.relations import relation_text

# About 1.5 KiB a relation at 384 dimensions (float32): a few MiB at most.
RELATION_TEXTS: Final = 2048

Vector = npt.NDArray[np.float32]


class RelationVectors:
    """The vectors of the last ``capacity`` relations read (``relation_text``), least recently
    used dropped first, and ``lines`` to read them by."""

    def __init__(self, embedder: Embedder, lines: RelationLines, *, capacity: int = RELATION_TEXTS):
        self._embedder = embedder
        self.lines = lines
        self._capacity = capacity
        self._kept: OrderedDict[str, Vector] = OrderedDict()

    def reading(self, question: str) -> RelationReading:
        """One recall's reader: it notes the relations its ranking asked for and has not read."""
        return RelationReading(self, question)

    def vectors(self, texts: tuple[str, ...], unread: set[str]) -> list[Vector] | None:
        """The vectors of ``texts``; None, with those not read added to ``unread``, while any
        is not read."""
        missing = [text for text in texts if text not in self._kept]
        if missing:
            unread.update(missing)
            return None
        for text in texts:
            self._kept.move_to_end(text)
        return [self._kept[text] for text in texts]

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
    """``RelationVectors`` as one recall's ranking asks it (``shared.ranking.RelationReader``),
    for ``question``."""

    def __init__(self, vectors: RelationVectors, question: str) -> None:
        self._vectors = vectors
        self._question = relation_text(question)
        self.unread: set[str] = set()

    def alike(self, newer: str, older: str, *, named: bool) -> bool | None:
        """The same relation read in other words; or, when the question names what the two
        share (``named``), the relation it asks told by the newer as well as by the older:
        "Which city does Isla Grant live in?" reads "The city Isla Grant calls home is Dublin."
        as telling it, though that reads apart from "Isla Grant lives in Toronto." as a
        relation of its own."""
        lines = self._vectors.lines
        pair = self._vectors.vectors((relation_text(newer), relation_text(older)), self.unread)
        if pair is None:
            if named:
                # Read in the same batch, in case the pair reads apart.
                self._vectors.vectors((self._question,), self.unread)
            return None
        if float(pair[0] @ pair[1]) >= lines.same:
            return True
        if not named:
            return False
        read = self._vectors.vectors((self._question,), self.unread)
        if read is None:
            return None
        told_by_newer, told_by_older = float(read[0] @ pair[0]), float(read[0] @ pair[1])
        return told_by_newer >= lines.answers and told_by_newer >= told_by_older - lines.margin

    async def read_unread(self) -> bool:
        """Read what the ranking asked for and was not read; whether there was any."""
        if not self.unread:
            return False
        await self._vectors.read(self.unread)
        self.unread = set()
        return True
