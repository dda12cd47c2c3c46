"""Where the versions of a fact stand: a memory a probable update links comes directly below
its newer version, however they were ranked, and the labels say which is which."""

from __future__ import annotations

from shared.model import Memory
from shared.ranking import MODE_PROFILES, Candidate, rank
from shared.ranking.linked import linked_first, newest_first, shown_links


def test_an_older_version_is_placed_directly_below_its_newer_one() -> None:
    ids = ["01A", "01B", "01C", "01D"]  # written in this order
    # 01A (old) ranked first, 01C (its update) ranked last of the four.
    assert linked_first([0, 1, 3, 2], ids, {"01A": ("01C",)}, limit=4) == [2, 0, 1, 3]
    # A newer version ranked above its older one stays where it was, the older below it.
    assert linked_first([2, 1, 0, 3], ids, {"01A": ("01C",)}, limit=4) == [2, 0, 1, 3]


def test_an_older_version_the_ranking_would_not_show_is_not_brought_in() -> None:
    ids = ["01A", "01B", "01C", "01D"]
    assert linked_first([2, 1, 0, 3], ids, {"01A": ("01C",)}, limit=2) == [2, 1]
    # Within the cut, a chain ranked apart stands newest first under its newest version.
    links = {"01A": ("01B",), "01B": ("01C",)}
    assert linked_first([2, 3, 0, 1], ids, links, limit=4) == [2, 1, 0, 3]


def test_a_chain_stands_newest_first_whatever_order_it_was_ranked_in() -> None:
    ids = ["01C", "01X", "01A", "01B"]  # ranked in this order; written A, B, C
    links = {"01A": ("01B",), "01B": ("01C",)}
    assert linked_first([2, 1, 0, 3], ids, links, limit=4) == [0, 3, 2, 1]


def test_a_newer_version_from_below_the_cut_comes_in_and_the_cut_holds() -> None:
    ids = ["01A", "01B", "01C", "01D"]
    assert linked_first([0, 1, 2, 3], ids, {"01A": ("01D",)}, limit=2) == [3, 0]


def test_a_chain_of_updates_stands_newest_first_and_a_cycle_ends() -> None:
    present = {"01C", "01A", "01B"}
    assert newest_first("01A", {"01A": ("01B",), "01B": ("01C",)}, present) == ["01C", "01B"]
    assert newest_first("01A", {"01A": ("01B",), "01B": ("01A",)}, present) == ["01B"]
    assert newest_first("01A", {"01A": ("01Z",)}, present) == []  # not among the results


def test_labels_name_only_results() -> None:
    newer, older = shown_links(["01C", "01A"], {"01A": ("01C", "01Z")})
    assert newer == [(), ("01C",)] and older == [("01A",), ()]


def memory(memory_id: str, content: str) -> Memory:
    return Memory(id=memory_id, tenant="t", content=content, created_at="2026-01-01T00:00:00.000Z")


def candidate(m: Memory, relevance: float) -> Candidate:
    return Candidate(
        memory_id=m.id, memory=m, similarity=relevance, keyword=None, relevance=relevance
    )


def test_rank_puts_the_update_first_labels_both_and_keeps_confidence_its_own() -> None:
    old = memory("01A", "The frontend is built with webpack.")
    new = memory("01C", "The frontend is built with vite since the rewrite.")
    other = memory("01B", "The docs site is built with MkDocs.")
    outcome = rank(
        [candidate(old, 0.70), candidate(other, 0.50), candidate(new, 0.40)],
        {},
        profile=MODE_PROFILES["precision"],  # keeps 80 % of the top: 0.40 alone would be cut
        limit=3,
        floor=0.3,
        high_similarity=0.99,
        now_ms=0,
        links={"01A": ("01C",)},
    )
    results = outcome.results
    assert [r.memory.id for r in results] == ["01C", "01A"]
    assert results[0].supersedes == ("01A",) and results[1].superseded_by == ("01C",)
    assert results[0].relevance == 0.40  # its own relevance, not the older one's


def test_without_links_rank_orders_as_before() -> None:
    old = memory("01A", "The frontend is built with webpack.")
    new = memory("01C", "The frontend is built with vite since the rewrite.")
    outcome = rank(
        [candidate(old, 0.70), candidate(new, 0.40)],
        {},
        profile=MODE_PROFILES["balanced"],
        limit=5,
        floor=0.3,
        high_similarity=0.99,
        now_ms=0,
    )
    assert [r.memory.id for r in outcome.results] == ["01A", "01C"]
    assert all(not r.superseded_by and not r.supersedes for r in outcome.results)
