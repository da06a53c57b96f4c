"""CPU kernel for ReverseSequence (see ops/sequence_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.registry import register_kernel


@register_kernel("ReverseSequence")
def _reverse_sequence(node):
    seq_dim, batch_dim = node.attr("seq_dim"), node.attr("batch_dim")

    def run(x, lengths):
        x, lengths = np.asarray(x), np.asarray(lengths).astype(np.int64, copy=False)
        _check(x, lengths, seq_dim, batch_dim)
        moved = np.moveaxis(x, (batch_dim, seq_dim), (0, 1))
        t = np.arange(moved.shape[1])
        lens = lengths[:, None]
        idx = np.where(t < lens, lens - 1 - t, t)
        out = moved[np.arange(moved.shape[0])[:, None], idx]
        return np.ascontiguousarray(np.moveaxis(out, (0, 1), (batch_dim, seq_dim)))

    return run


def _check(x, lengths, seq_dim: int, batch_dim: int) -> None:
    """TF's ReverseSequenceOp checks, with its messages."""
    if batch_dim == seq_dim:
        raise invalid(f"seq_dim == batch_dim == {seq_dim}")
    if seq_dim >= x.ndim or batch_dim >= x.ndim:
        raise invalid(f"seq_dim/batch_dim must be < input rank: {seq_dim}, {batch_dim} vs. "
                      f"{x.ndim}")
    if lengths.ndim != 1:
        raise invalid(f"seq_lens input must be 1-dim, not {lengths.ndim}")
    if lengths.shape[0] != x.shape[batch_dim]:
        raise invalid(f"Length of seq_lens != input.dims({batch_dim}), ({lengths.shape[0]} "
                      f"vs. {x.shape[batch_dim]})")
    for i, n in enumerate(lengths.tolist()):
        if n < 0:
            raise invalid(f"seq_lens({i}) < 0")
        if n > x.shape[seq_dim]:
            raise invalid(f"seq_lens({i}) > input.dims({seq_dim})")
