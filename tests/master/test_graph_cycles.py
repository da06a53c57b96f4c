"""GraphCycles (master/passes/graph_cycles.py): contracting an edge never closes a cycle, and
is refused exactly when another path joins its ends (checked against brute force on random
DAGs)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorweave.master.passes.graph_cycles import GraphCycles


def _reaches(succ: dict[int, set[int]], a: int, b: int, skip_direct: bool) -> bool:
    """Brute force: a path a → … → b (with skip_direct, not the edge a → b itself)."""
    stack = [s for s in succ[a] if not (skip_direct and s == b)]
    seen = set()
    while stack:
        x = stack.pop()
        if x == b:
            return True
        if x not in seen:
            seen.add(x)
            stack.extend(succ[x])
    return False


@st.composite
def dags_and_merges(draw):
    n = draw(st.integers(2, 14))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=3 * n, unique=True))
    merges = draw(st.lists(st.sampled_from(pairs), max_size=2 * n))
    return n, edges, merges


@settings(max_examples=100, deadline=None)
@given(dags_and_merges())
def test_contraction_keeps_the_graph_acyclic_and_refuses_only_real_cycles(case):
    n, edges, merges = case
    g = GraphCycles(n)
    for x, y in edges:
        g.add_edge(x, y)
    rep = list(range(n))               # node → the node it was merged into
    succ = {i: set() for i in range(n)}  # the contracted graph, kept by brute force
    for x, y in edges:
        succ[x].add(y)

    def find(x):
        while rep[x] != x:
            x = rep[x]
        return x

    for x, y in merges:
        a, b = find(x), find(y)
        if a == b or b not in succ[a]:
            continue
        expect_ok = not _reaches(succ, a, b, skip_direct=True)
        assert g.contract(a, b) is expect_ok
        if expect_ok:
            rep[b] = a
            for s in succ.pop(b):
                succ[a].add(s)
            for v in succ.values():
                if b in v:
                    v.discard(b)
                    v.add(a)
            succ[a].discard(a)
            succ[b] = set()
        assert g.is_acyclic()
        for v, outs in succ.items():     # GraphCycles holds the same contracted edges
            assert g.succ[v] == outs


def test_a_path_around_the_edge_blocks_the_contraction():
    # 0 → 1 → 2 and 0 → 2: merging 0 and 2 would put 1 on a cycle
    g = GraphCycles(3)
    for x, y in [(0, 1), (1, 2), (0, 2)]:
        g.add_edge(x, y)
    assert g.contract(0, 2) is False
    assert g.contract(0, 1) is True
    assert g.contract(0, 2) is True
    assert g.succ[0] == set() and g.is_acyclic()


def test_edges_must_follow_the_numbering():
    g = GraphCycles(2)
    with pytest.raises(ValueError, match="topological"):
        g.add_edge(1, 0)
    with pytest.raises(ValueError, match="no edge"):
        g.contract(0, 1)
