"""Edge contraction that keeps a DAG acyclic (TF's GraphCycles, as the clustering pass uses it).

Nodes are numbered in a topological order of the graph, which is their first rank; every edge
goes from a lower rank to a higher one, and `contract` keeps it so. Contracting the edge a → b
is refused when another path leads from a to b (merging them would close a cycle through that
path). The search for such a path only visits nodes ranked between a and b, and so does the
reordering after a merge: the ancestors of b ranked after a move before the merged node, the
descendants of a ranked before b after it (Pearce and Kelly's dynamic topological order).
"""

from __future__ import annotations


class GraphCycles:
    """A DAG over nodes 0..n-1 given in topological order. Not thread-safe."""

    def __init__(self, n: int):
        self.rank = list(range(n))
        self.succ: list[set[int]] = [set() for _ in range(n)]
        self.pred: list[set[int]] = [set() for _ in range(n)]

    def add_edge(self, x: int, y: int) -> None:
        """Adds x → y. Raises ValueError when y does not come after x (not a topological
        numbering, or x == y)."""
        if self.rank[x] >= self.rank[y]:
            raise ValueError(f"edge {x} -> {y} goes against the topological order")
        self.succ[x].add(y)
        self.pred[y].add(x)

    def contract(self, a: int, b: int) -> bool:
        """Merges b into a along the edge a → b; False (nothing changed) when another path
        from a to b exists. Raises ValueError when there is no edge a → b."""
        if b not in self.succ[a]:
            raise ValueError(f"no edge {a} -> {b}")
        forward = self._forward(a, b)
        if forward is None:
            return False
        backward = self._backward(b, a)
        self._reorder(a, b, backward, forward)
        self._merge_edges(a, b)
        return True

    def _forward(self, a: int, b: int) -> set[int] | None:
        """Nodes reachable from a, except through a → b, ranked before b; None if b is."""
        limit, seen = self.rank[b], set()
        stack = [s for s in self.succ[a] if s != b]
        while stack:
            x = stack.pop()
            if x == b:
                return None
            if x in seen or self.rank[x] > limit:
                continue
            seen.add(x)
            stack.extend(self.succ[x])
        return seen

    def _backward(self, b: int, a: int) -> set[int]:
        """Ancestors of b, except through a → b, ranked after a."""
        limit, seen = self.rank[a], set()
        stack = [p for p in self.pred[b] if p != a]
        while stack:
            x = stack.pop()
            if x in seen or self.rank[x] < limit:
                continue
            seen.add(x)
            stack.extend(self.pred[x])
        return seen

    def _reorder(self, a, b, backward, forward) -> None:
        """Gives b's ancestors, then the merged node, then a's descendants the ranks the whole
        window held, keeping each group's order."""
        slots = sorted(self.rank[x] for x in backward | forward | {a, b})
        order = sorted(backward, key=self.rank.__getitem__) + [a] + \
            sorted(forward, key=self.rank.__getitem__)
        for x, r in zip(order, slots):
            self.rank[x] = r

    def _merge_edges(self, a: int, b: int) -> None:
        for s in self.succ[b]:
            self.pred[s].discard(b)
            self.pred[s].add(a)
            self.succ[a].add(s)
        for p in self.pred[b]:
            self.succ[p].discard(b)
            if p != a:
                self.succ[p].add(a)
                self.pred[a].add(p)
        self.succ[a].discard(b)
        self.succ[b], self.pred[b] = set(), set()

    def is_acyclic(self) -> bool:
        """Whether every edge still goes up in rank (tests use it)."""
        return all(self.rank[x] < self.rank[y] for x in range(len(self.succ))
                   for y in self.succ[x])
