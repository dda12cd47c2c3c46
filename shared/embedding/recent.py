"""The vectors of the questions asked last, so a question asked again is not embedded again.

An agent often recalls the same question more than once (at each step of a task, on a retried
call), and a question's vector depends on its text and the model alone. Only questions are kept:
a memory's content is embedded once, when it is written.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from typing import Final

from shared.embedding.interface import Embedder

# About 3 KiB a question at 384 dimensions: a few MiB at most, nothing on an idle server.
RECENT_QUESTIONS: Final = 512


class RecentVectors:
    """``embed`` through ``embedder``, the last ``capacity`` texts' vectors kept, least recently
    asked dropped first."""

    def __init__(self, embedder: Embedder, *, capacity: int = RECENT_QUESTIONS) -> None:
        self._embedder = embedder
        self._capacity = capacity
        # Doubles: the vector comes back exactly as the model gave it.
        self._kept: OrderedDict[str, array[float]] = OrderedDict()

    async def embed(self, text: str) -> list[float]:
        kept = self._kept.get(text)
        if kept is not None:
            self._kept.move_to_end(text)
            return kept.tolist()
        vector = await self._embedder.embed(text)
        self._kept[text] = array("d", vector)
        if len(self._kept) > self._capacity:
            self._kept.popitem(last=False)
        return vector
