"""The cycles of a graph of ids, as the chains and the importer's link check read them."""

from __future__ import annotations

import itertools

from shared.revisions.cycles import cyclic_components


def test_a_chain_and_a_fork_have_no_cycle() -> None:
    assert cyclic_components({"a": {"b"}, "b": {"c"}, "x": {"y", "z"}}) == {}


def test_a_self_loop_and_two_separate_cycles_are_found_with_their_members() -> None:
    found = cyclic_components(
        {"s": {"s"}, "y": {"z"}, "z": {"y", "out"}, "p": {"q"}, "q": {"r"}, "r": {"p"}}
    )
    assert found == {
        "s": frozenset({"s"}),
        "y": frozenset({"y", "z"}),
        "z": frozenset({"y", "z"}),
        "p": frozenset({"p", "q", "r"}),
        "q": frozenset({"p", "q", "r"}),
        "r": frozenset({"p", "q", "r"}),
    }


def test_a_chain_of_a_hundred_thousand_closed_at_its_end_needs_no_recursion() -> None:
    ids = [f"m{n}" for n in range(100_000)]
    edges = {old: {new} for old, new in itertools.pairwise(ids)}
    assert cyclic_components(edges) == {}
    edges[ids[-1]] = {ids[0]}
    found = cyclic_components(edges)
    assert len(found) == len(ids) and found[ids[0]] == frozenset(ids)
