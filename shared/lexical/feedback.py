"""Pseudo-relevance feedback for the keyword leg: the terms a query's best results share.

The first answer's best memories (both legs fused) are taken as relevant, and the terms they
repeat most, weighed by how rare they are in the tenant, are added to the query at a fraction of
its own weight (RM3, Lavrenko and Croft's relevance model, with the query's terms kept whole). A
long technical message that answers a question usually shares few of its words but many of its
answer's neighbours' (the library, the error, the function the chat is about); a short turn is
found through the words of the turns like it.

Only the candidates the two legs already found are scored again (``KeywordQuery.fed_back``), at
the query's own spread: asking the whole index again reads the same recall for a third more
recall time, scoring and sorting every memory the added terms reach.

It raises recall most on the long chats and a little on LoCoMo, at the price of the first result
being right a little less often (``bench/ablation.py``; the figures and the grid of weights:
``docs/benchmarks.md``). Whether anything is stored, confidence and revisions stay on the
question's own relevance (``shared.operations.fusion.fuse_again``). A term counted once among
the feedback (a rare word of one short turn) is not taken: LoCoMo's turns' one-off words would
pull in their neighbours. Pure arithmetic over the index, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Protocol

# How many of the first answer's best memories count as relevant: fewer gain nothing, more pull
# in LoCoMo's unrelated turns (docs/benchmarks.md).
FEEDBACK_MEMORIES: Final = 8
# How many terms are added, and the best one's weight against each of the query's own (the
# others in proportion to their score): recall is flat around these (docs/benchmarks.md).
FEEDBACK_TERMS: Final = 10
FEEDBACK_WEIGHT: Final = 0.3
# A term must occur this often among the feedback memories, all of them together.
FEEDBACK_MIN_COUNT: Final = 2


class TermCounts(Protocol):
    """What the feedback reads of an index (``shared.lexical.index.LexicalIndex``)."""

    def counts(self, memory_id: str) -> Mapping[str, int]: ...

    def weight(self, term: str) -> float: ...


def feedback_terms(
    index: TermCounts, feedback: Sequence[str], asked: Mapping[str, float]
) -> dict[str, float]:
    """The terms to add to a query whose own terms are ``asked`` (term -> weight), from the
    memories ``feedback`` (ids, best first; only the first ``FEEDBACK_MEMORIES`` count): each
    term scored by its share of each memory's terms, summed, times its IDF; the query's own
    terms and terms occurring once are left out. Each chosen term's weight: FEEDBACK_WEIGHT ×
    its score / the best score."""
    shares: dict[str, float] = {}
    occurrences: dict[str, int] = {}
    for memory_id in feedback[:FEEDBACK_MEMORIES]:
        counts = index.counts(memory_id)
        total = sum(counts.values())
        for term, count in counts.items():
            shares[term] = shares.get(term, 0.0) + count / total
            occurrences[term] = occurrences.get(term, 0) + count
    # The IDF only for the terms that may be taken: most of a long message's occur once.
    scores = {
        term: share * index.weight(term)
        for term, share in shares.items()
        if occurrences[term] >= FEEDBACK_MIN_COUNT and term not in asked
    }
    chosen = sorted(scores, key=scores.__getitem__, reverse=True)[:FEEDBACK_TERMS]
    if not chosen:
        return {}
    best = scores[chosen[0]]
    return {term: FEEDBACK_WEIGHT * scores[term] / best for term in chosen}
