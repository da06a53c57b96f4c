"""CPU kernels for Slice, StridedSlice, Split, SplitV and Unpack (see ops/slicing_ops.py).

All return views of their input where numpy allows (declared `forwards_input`).
"""

from __future__ import annotations

import numpy as np

from tensorweave.ops.slicing_ops import slice_index
from tensorweave.ops.strided_slice_spec import StridedSliceError, validate
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid
from tensorweave.runtime.kernels.registry import register_kernel

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _as_array(out, like):
    """numpy indexing gives Python/numpy scalars for 0-d results; keep arrays (and dtype)."""
    return out if isinstance(out, np.ndarray) else np.asarray(out, dtype=np.asarray(like).dtype)


@register_kernel("Slice", forwards_input=True)
def _slice(node):
    def run(x, begin, size):
        b, s = begin.tolist(), size.tolist()
        if np.ndim(begin) != 1 or np.ndim(size) != 1 or len(b) != len(s) or \
                len(b) != np.ndim(x):
            raise invalid(f"Expected begin and size arguments to be 1-D tensors of size "
                          f"{np.ndim(x)}, but got shapes {fmt_shape(np.shape(begin))} and "
                          f"{fmt_shape(np.shape(size))} instead.")
        try:
            index = slice_index(b, s, np.shape(x))
        except ValueError as e:
            raise invalid(str(e)) from None
        return _as_array(np.asarray(x)[index], x)

    return run


@register_kernel("StridedSlice", forwards_input=True)
def _strided_slice(node):
    masks = {k: node.attr(k) for k in _MASKS}
    cache = [None]  # (key, numpy index) of the last spec seen: specs rarely change per step

    def index_for(shape, begin, end, strides):
        key = (shape, begin.tobytes(), end.tobytes(), strides.tobytes())
        hit = cache[0]
        if hit is not None and hit[0] == key:
            return hit[1]
        try:
            dense = validate(begin.tolist(), end.tolist(), strides.tolist(), shape, **masks)
        except StridedSliceError as e:
            raise invalid(str(e)) from None
        cache[0] = (key, dense.index)
        return dense.index

    def run(x, begin, end, strides):
        for v in (begin, end, strides):
            if np.ndim(v) != 1:
                raise invalid(f"Expected begin, end, and strides to be 1D equal size tensors, "
                              f"but got shapes {fmt_shape(np.shape(begin))}, "
                              f"{fmt_shape(np.shape(end))}, and "
                              f"{fmt_shape(np.shape(strides))} instead.")
        index = index_for(np.shape(x), begin, end, strides)
        return _as_array(np.asarray(x)[index], x)

    return run


@register_kernel("Split", forwards_input=True)
def _split(node):
    n = node.attr("num_split")

    def run(split_dim, x):
        rank = np.ndim(x)
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise invalid(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got "
                          f"{axis}")
        axis %= rank
        size = np.shape(x)[axis]
        if size % n:
            raise invalid(f"Number of ways to split should evenly divide the split dimension, "
                          f"but got split_dim {axis} (size = {size}) and num_split {n}")
        # NOTE: one output is returned as itself (the executor does not unpack it)
        return tuple(np.split(x, n, axis=axis)) if n > 1 else x

    return run


@register_kernel("SplitV", forwards_input=True)
def _split_v(node):
    n = node.attr("num_split")

    def run(x, size_splits, split_dim):
        rank = np.ndim(x)
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise invalid(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got "
                          f"{axis}")
        axis %= rank
        sizes = _split_sizes(size_splits.tolist(), np.shape(x)[axis], n)
        parts = tuple(np.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis))
        return parts if n > 1 else parts[0]

    return run


def _split_sizes(sizes, d, n):
    if len(sizes) != n:
        raise invalid(f"Number of ways to split should be equal to the number of size "
                      f"splits, got {n} and {len(sizes)}")
    if sizes.count(-1) > 1:
        raise invalid("There can only be one -1 in the input.")
    total = sum(s for s in sizes if s != -1)
    if (total > d) if -1 in sizes else (total != d):
        raise invalid(f"Determined shape must either match input shape along split_dim "
                      f"exactly if fully specified, or be less than the size of the input "
                      f"along split_dim if not fully specified.  Got: {total}")
    if any(s < -1 for s in sizes):
        raise invalid(f"Split size at index {[s < -1 for s in sizes].index(True)} must be >= "
                      f"0. Got: {min(sizes)}")
    return [d - total if s == -1 else s for s in sizes]


@register_kernel("Unpack", forwards_input=True)
def _unpack(node):
    num, axis = node.attr("num"), node.attr("axis")

    def run(x):
        shape = np.shape(x)
        rank = len(shape)
        if not -rank <= axis < rank:
            raise invalid(f"axis = {axis} not in [{-rank}, {rank})")
        a = axis % rank
        if shape[a] != num:
            raise invalid(f"Input shape axis {a} must equal {num}, got shape "
                          f"{fmt_shape(shape)}")
        x = np.asarray(x)
        lead = (slice(None),) * a
        return tuple(_as_array(x[lead + (i,)], x) for i in range(num))

    return run
