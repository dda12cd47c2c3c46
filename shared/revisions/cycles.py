"""The cycles of a directed graph of ids: its strongly connected components that hold a cycle
(two or more members, or one with an edge to itself). Pure, iterative (a long chain must not
hit the recursion limit), linear in the edges: Tarjan's algorithm."""

from __future__ import annotations

from collections.abc import Collection, Mapping


def cyclic_components(edges: Mapping[str, Collection[str]]) -> dict[str, frozenset[str]]:
    """Each id that lies on a cycle, mapped to the members of its component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: dict[str, frozenset[str]] = {}
    for root in edges:
        if root in index:
            continue
        # Each frame: a node and the iterator over its successors still to visit.
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(edges.get(step, ()))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] != index[node]:
                continue
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1 or node in edges.get(node, ()):
                component = frozenset(members)
                found.update(dict.fromkeys(members, component))
    return found
