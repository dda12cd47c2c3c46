"""What the keyword leg found in one memory for a query: the record fusion and ranking read
beside a vector ``Hit`` (the leg itself is ``shared.lexical.index``)."""

from __future__ import annotations

import msgspec


class KeywordHit(msgspec.Struct, frozen=True, kw_only=True):
    """One memory's BM25 score for a query, and which of the query's terms it holds."""

    memory_id: str
    score: float
    matched: tuple[str, ...]
    # Every rare term of the query (see shared.lexical.query.RARE_SHARE) is in this memory,
    # and there was one.
    all_rare: bool
    # The share of the query's weight (its terms' IDF, a term no memory holds weighing most)
    # that this memory holds: 1.0 when it holds every term of the query.
    coverage: float
    # How many of the query's selective names (shared.lexical.query.KeywordResult.names) this
    # memory holds whole.
    names: int = 0
    # It holds every one of the query's names, and no other memory of the tenant holds any:
    # the one memory an exact-name query can mean.
    sole: bool = False
    # Every term of the query is one of this memory's labels (its category and tags).
    labelled: bool = False
