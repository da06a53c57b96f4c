"""TF's CTC prefix beam search (ctc_beam_search.h, with the default scorer), for one
sequence: a tree of label prefixes, each with log-probabilities of ending in a blank, ending
in its label, and in total; at each step the beams are updated, then grown by one label each,
keeping the `beam_width` most probable prefixes. Inputs are logits, normalized per step.
"""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid

NEG_INF = -np.inf


def _lse(a: float, b: float) -> float:
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    return float(np.logaddexp(a, b))


class _Prob:
    __slots__ = ("blank", "label", "total")

    def __init__(self, blank=NEG_INF, label=NEG_INF, total=NEG_INF):
        self.blank, self.label, self.total = blank, label, total

    def copy(self) -> _Prob:
        return _Prob(self.blank, self.label, self.total)


class _Entry:
    """A prefix: its last label, parent, children (created on first growth), probabilities
    at the previous (`oldp`) and current (`newp`) step."""

    __slots__ = ("label", "parent", "children", "oldp", "newp")

    def __init__(self, label: int, parent):
        self.label, self.parent = label, parent
        self.children: list[_Entry] | None = None
        self.oldp, self.newp = _Prob(), _Prob()

    def active(self) -> bool:
        return self.newp.total != NEG_INF

    def labels(self, merge_repeated: bool) -> list[int]:
        out, prev, e = [], -1, self
        while e.parent is not None:
            if not merge_repeated or e.label != prev:
                out.append(e.label)
            prev, e = e.label, e.parent
        return out[::-1]


class _Beam:
    def __init__(self, width: int, num_classes: int):
        self.width, self.blank = width, num_classes - 1
        self.root = _Entry(-1, None)
        self.root.newp = _Prob(0.0, NEG_INF, 0.0)
        self.leaves: list[_Entry] = [self.root]

    def _bottom(self) -> _Entry:
        return min(self.leaves, key=lambda e: e.newp.total)

    def _candidate(self, p: _Prob) -> bool:
        return p.total > NEG_INF and (len(self.leaves) < self.width or
                                      p.total > self._bottom().newp.total)

    def step(self, log_y: np.ndarray) -> None:
        branches = sorted(self.leaves, key=lambda e: -e.newp.total)
        self.leaves = []
        for b in branches:
            b.oldp = b.newp.copy()
        for b in branches:
            self._update(b, log_y)
            self.leaves.append(b)
        for b in branches:
            if self._candidate(b.oldp):
                self._grow(b, log_y)

    def _update(self, b: _Entry, log_y) -> None:
        p = b.newp
        if b.parent is not None:
            if b.parent.active():
                prev = b.parent.oldp.blank if b.label == b.parent.label else \
                    b.parent.oldp.total
                p.label = _lse(p.label, prev)
            p.label += log_y[b.label]
        p.blank = b.oldp.total + log_y[self.blank]
        p.total = _lse(p.blank, p.label)

    def _grow(self, b: _Entry, log_y) -> None:
        if b.children is None:
            b.children = [_Entry(c, b) for c in range(self.blank)]
        for c in b.children:
            if c.active():
                continue
            prev = b.oldp.blank if c.label == b.label else b.oldp.total
            c.newp = _Prob(NEG_INF, log_y[c.label] + prev, log_y[c.label] + prev)
            if self._candidate(c.newp):
                if len(self.leaves) == self.width:
                    bottom = self._bottom()
                    bottom.newp = _Prob()
                    self.leaves.remove(bottom)
                self.leaves.append(c)
            else:
                c.oldp, c.newp = _Prob(), _Prob()

    def top(self, n: int, merge_repeated: bool) -> list[tuple[list[int], float]]:
        if n > len(self.leaves):
            raise invalid("Less leaves in the beam search than requested.")
        best = sorted(self.leaves, key=lambda e: -e.newp.total)[:n]
        return [(e.labels(merge_repeated), e.newp.total) for e in best]


def beam_search(logits: np.ndarray, width: int, top: int, merge_repeated: bool):
    """The `top` best (labels, log-probability) of one sequence's `[time, classes]` logits."""
    logits = np.asarray(logits, np.float64)
    beam = _Beam(width, logits.shape[1])
    for row in logits:
        shifted = row - row.max()
        beam.step(shifted - np.log(np.exp(shifted).sum()))
    return beam.top(top, merge_repeated)


__all__ = ["beam_search"]
