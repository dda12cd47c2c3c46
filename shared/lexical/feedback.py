"""Pseudo-relevance feedback for the keyword leg: the terms a query's best results share.

The first answer's best memories (both legs fused) are taken as relevant, and the terms they
repeat most, weighed by how rare they are in the tenant, are added to the query at a fraction of
its own weight (RM3, Lavrenko and Croft's relevance model, with the query's terms kept whole). A
long technical message that answers a question usually shares few of its words but many of its
answer's neighbours' (the library, the error, the function the chat is about); a short turn is
found through the words of the turns like it.

Only the candidates the two legs already found are scored again (``KeywordQuery.fed_back``), at
the query's own spread: asking the whole index again (the first version) gave the same R@5 for
a third more recall time, scoring and sorting every memory the added terms reach.

Measured with ``bench/ablation.py`` (``docs/benchmarks.md``), R@5 at balanced/5: the long chats
0.320 -> 0.339, LoCoMo 0.578 -> 0.583, technical notes 0.996 -> 1.000; hard notes (0.854),
Harbor and DevBench (1.000) as before; the first result is right less often (chats 39 -> 33 of
179, LoCoMo 584 -> 578 of 1,535). A weight of 0.2-0.35 reads 0.335-0.343 on the chats; 0.45
falls to 0.324. Whether anything is stored, confidence and revisions stay on the question's own
relevance (``shared.operations.fusion.fuse_again``). A term counted once among the feedback (a rare
word of one short turn) is not taken: without that LoCoMo lost 0.006, its turns' one-off words
pulling in their neighbours. Pure arithmetic over the index, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Protocol

# How many of the first answer's best memories count as relevant (5-8 measured alike on the
# long chats, 0.336-0.339; 4 gained nothing, 10 cost LoCoMo 0.005).
FEEDBACK_MEMORIES: Final = 8
# How many terms are added, and the best one's weight against each of the query's own (the
# others in proportion to their score): 5-15 terms and 0.2-0.4 read within 0.01 of each other.
FEEDBACK_TERMS: Final = 10
FEEDBACK_WEIGHT: Final = 0.3
# A term must occur this often among the feedback memories, all of them together.
FEEDBACK_MIN_COUNT: Final = 2


class TermCounts(Protocol):
    """What the feedback reads of an index (``shared.lexical.index.LexicalIndex``)."""

    def counts(self, memory_id: str) -> dict[str, int]: ...

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
