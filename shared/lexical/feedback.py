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

import heapq
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

import numpy as np

from shared.lexical.summed import TermIds, TermTotals

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

    def counted(self, memory_id: str) -> tuple[TermIds, TermTotals]: ...

    def term(self, term_id: int) -> str: ...

    def weight(self, term: str) -> float: ...

    def highest_weight(self) -> float: ...


def feedback_terms(
    index: TermCounts, feedback: Sequence[str], asked: Mapping[str, float]
) -> dict[str, float]:
    """The terms to add to a query whose own terms are ``asked`` (term -> weight), from the
    memories ``feedback`` (ids, best first; only the first ``FEEDBACK_MEMORIES`` count): each
    term scored by its share of each memory's terms, summed, times its IDF; the query's own
    terms and terms occurring once are left out. Each chosen term's weight: FEEDBACK_WEIGHT ×
    its score / the best score."""
    counted = [index.counted(memory_id) for memory_id in feedback[:FEEDBACK_MEMORIES]]
    counted = [(ids, counts) for ids, counts in counted if len(ids)]
    if not counted:
        return {}
    ids = np.concatenate([ids for ids, _ in counted])
    # Each memory's counts as shares of its terms, memory after memory, as they are summed.
    shares = np.concatenate([counts / int(counts.sum()) for _, counts in counted])
    occurrences = np.concatenate([counts for _, counts in counted])
    # The terms in the order first met: ties among the chosen fall in that order.
    terms, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    summed = np.bincount(inverse, weights=shares, minlength=len(terms))
    occurred = np.bincount(inverse, weights=occurrences, minlength=len(terms))
    # The IDF only for the terms that may be taken: most of a long message's occur once.
    taken = np.argsort(first, kind="stable")
    taken = taken[occurred[taken] >= FEEDBACK_MIN_COUNT]
    taken_shares = summed[taken]
    largest_first = np.argsort(-taken_shares, kind="stable").tolist()
    scores = _best_scores(index, terms[taken].tolist(), taken_shares.tolist(), largest_first, asked)
    chosen = sorted(scores, key=scores.__getitem__, reverse=True)[:FEEDBACK_TERMS]
    if not chosen:
        return {}
    best = scores[chosen[0]]
    return {term: FEEDBACK_WEIGHT * scores[term] / best for term in chosen}


def _best_scores(
    index: TermCounts,
    term_ids: list[int],
    shares: list[float],
    largest_first: list[int],
    asked: Mapping[str, float],
) -> dict[str, float]:
    """Each term's share times its IDF, for the terms that can be among the best
    ``FEEDBACK_TERMS``, in the order given. Terms are weighed largest share first, and the walk
    stops at a share that even the highest IDF cannot lift to the best scores so far: a long
    message gives hundreds of terms, and looking up each one's IDF would be most of the
    feedback's time. A term left out scores below every one chosen, so the choice is the same
    as when every term is weighed."""
    highest = index.highest_weight()
    best: list[float] = []  # the best FEEDBACK_TERMS scores so far, smallest first
    scored: dict[int, tuple[str, float]] = {}
    for at in largest_first:
        share = shares[at]
        if len(best) == FEEDBACK_TERMS and share * highest < best[0]:
            break
        term = index.term(term_ids[at])
        if term in asked:
            continue
        score = share * index.weight(term)
        scored[at] = (term, score)
        if len(best) < FEEDBACK_TERMS:
            heapq.heappush(best, score)
        elif score > best[0]:
            heapq.heapreplace(best, score)
    return dict(scored[at] for at in sorted(scored))
