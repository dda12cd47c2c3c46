"""One memory either leg of a recall found, with its fused relevance: what ranking orders (the
fusion that makes it is recall's step, ``shared.operations.fusion``)."""

from __future__ import annotations

import msgspec

from shared.model import KeywordHit, Memory


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """One memory either leg found. ``memory`` is None for a keyword-only hit whose body has not
    been fetched yet; ``similarity`` is then the bound described in the module docstring."""

    memory_id: str
    memory: Memory | None
    similarity: float
    keyword: KeywordHit | None
    relevance: float
    # The relevance before the keyword leg's feedback (``fuse_again``): what the question's own
    # words give, which the revision rule compares. None when there was no feedback.
    asked: float | None = None

    @property
    def own_relevance(self) -> float:
        return self.relevance if self.asked is None else self.asked
