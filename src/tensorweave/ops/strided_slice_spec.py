"""TensorFlow's strided-slice semantics (`ValidateStridedSliceOp`), in one place.

The StridedSlice shape function, its constant evaluator and its CPU kernel all call
`validate(...)`, so static shapes and runtime results cannot disagree. The sparse spec (one
entry per index of `x[...]`, with ellipsis / new-axis / shrink masks) is expanded to a dense
spec with one entry per input dimension, each dimension's begin/end are canonicalized and
bounds-checked, and the processing and final shapes are computed exactly as TF does.
"""

from __future__ import annotations

from dataclasses import dataclass

_NEW_AXIS = -2
_SHRINK = -1


class StridedSliceError(ValueError):
    """An invalid slice spec (the message is TensorFlow's)."""


@dataclass(frozen=True)
class DenseSlice:
    """The validated slice. Dims are ints, or None where unknown statically.

    `index` is a numpy basic-indexing tuple (ints for shrunk dims, slices, None for new axes)
    that computes the slice, or None when begin/end/input dims are not all known.
    """

    final_shape: tuple
    processing_shape: tuple
    index: tuple | None
    is_identity: bool


def validate(begin, end, strides, input_dims, begin_mask=0, end_mask=0, ellipsis_mask=0,
             new_axis_mask=0, shrink_axis_mask=0) -> DenseSlice:
    """Validates a strided slice of an input of rank `len(input_dims)`.

    Args:
      begin, end: sequences of ints, or None when unknown (then only the shape is computed).
      strides: a sequence of ints (required).
      input_dims: the input's dims (ints or None); the rank must be known.
    Raises:
      StridedSliceError: with TensorFlow's message.
    """
    strides = [int(s) for s in strides]
    n = len(strides)
    for v in (begin, end):
        if v is not None and (len(v) != n or n >= 32):
            raise StridedSliceError(
                "Expected begin, end, and strides to be 1D equal size tensors, but got "
                f"shapes [{_len(begin)}], [{_len(end)}], and [{n}] instead.")
    if ellipsis_mask & (ellipsis_mask - 1):
        raise StridedSliceError("Multiple ellipses in slice spec not allowed")
    sparse = _Sparse(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                     shrink_axis_mask)
    dense = _build_dense(sparse, len(input_dims))
    return _finish(dense, tuple(input_dims))


def _len(v):
    return "?" if v is None else len(v)


class _Sparse:
    __slots__ = ("begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask",
                 "new_axis_mask", "shrink_axis_mask", "dims", "num_add_axis_after_ellipsis")

    def __init__(self, begin, end, strides, bm, em, ellipsis, new_axis, shrink):
        self.begin = None if begin is None else [int(b) for b in begin]
        self.end = None if end is None else [int(e) for e in end]
        self.strides = strides
        self.begin_mask, self.end_mask = bm, em
        self.new_axis_mask, self.shrink_axis_mask = new_axis, shrink
        self.dims = len(strides)
        seen, after = False, 0
        for i in range(self.dims):
            if seen and (1 << i) & new_axis:
                after += 1
            if (1 << i) & ellipsis:
                seen = True
        if not seen:  # an implicit ellipsis at the end
            ellipsis |= 1 << self.dims
            self.dims += 1
        self.ellipsis_mask = ellipsis
        self.num_add_axis_after_ellipsis = after


class _Dense:
    __slots__ = ("dims", "begin", "end", "strides", "begin_mask", "end_mask", "shrink_mask",
                 "gather", "order", "valid")

    def __init__(self, dims: int, valid: bool):
        self.dims = dims
        self.begin = [0] * dims
        self.end = [0] * dims
        self.strides = [1] * dims
        self.begin_mask = self.end_mask = self.shrink_mask = 0
        self.gather: list[int] = []   # final-shape source per entry: dim index or _NEW_AXIS/_SHRINK
        self.order: list[int] = []    # numpy index order: dim index or _NEW_AXIS
        self.valid = valid


def _build_dense(sp: _Sparse, rank: int) -> _Dense:
    d = _Dense(rank, sp.begin is not None and sp.end is not None)
    full = 0
    for i in range(sp.dims):
        bit = 1 << i
        if bit & sp.ellipsis_mask:
            nxt = min(rank - (sp.dims - i) + 1 + sp.num_add_axis_after_ellipsis, rank)
            while full < nxt:
                d.begin_mask |= 1 << full
                d.end_mask |= 1 << full
                d.gather.append(full)
                d.order.append(full)
                full += 1
        elif bit & sp.new_axis_mask:
            d.gather.append(_NEW_AXIS)
            d.order.append(_NEW_AXIS)
        else:
            if full == rank:
                raise StridedSliceError(
                    f"Index out of range using input dim {full}; input has only {rank} dims")
            _copy_entry(sp, d, i, full)
            full += 1
    return d


def _copy_entry(sp: _Sparse, d: _Dense, i: int, full: int) -> None:
    bit, fbit = 1 << i, 1 << full
    if sp.begin is not None:
        d.begin[full] = sp.begin[i]
    if sp.end is not None:
        d.end[full] = sp.end[i]
    d.strides[full] = sp.strides[i]
    if sp.begin_mask & bit:
        d.begin_mask |= fbit
    if sp.end_mask & bit:
        d.end_mask |= fbit
    if sp.shrink_axis_mask & bit:
        d.gather.append(_SHRINK)
        d.shrink_mask |= fbit
    else:
        d.gather.append(full)
    d.order.append(full)


def _finish(d: _Dense, dims: tuple) -> DenseSlice:
    processing, per_dim = [], []
    identity = True
    for i, dim in enumerate(dims):
        size, item = _one_dim(d, i, dim)
        processing.append(size)
        per_dim.append(item)
        identity &= item == slice(0, dim, 1)
    final = tuple(1 if g == _NEW_AXIS else processing[g] for g in d.gather if g != _SHRINK)
    index = None
    if d.valid and None not in dims:
        index = tuple(None if k == _NEW_AXIS else per_dim[k] for k in d.order)
    return DenseSlice(final, tuple(processing), index, identity and index is not None)


def _one_dim(d: _Dense, i: int, dim):
    """(processing size or None, numpy index item or None) of dense dimension `i`."""
    stride = d.strides[i]
    if stride == 0:
        raise StridedSliceError(f"strides[{i}] must be non-zero")
    shrink = bool(d.shrink_mask & (1 << i))
    if dim is None:
        return (1 if shrink else None), None
    if shrink and stride <= 0:
        raise StridedSliceError("only stride 1 allowed on non-range indexing.")
    masked_b, masked_e = bool(d.begin_mask & (1 << i)), bool(d.end_mask & (1 << i))
    if d.valid:
        if shrink:
            b = d.begin[i] + dim if d.begin[i] < 0 else d.begin[i]
            if b < 0 or b >= dim:
                raise StridedSliceError(f"slice index {b} of dimension {i} out of bounds.")
            return 1, b
        b = _canonical(d.begin[i], masked_b, 0, stride, dim)
        e = _canonical(d.end[i], masked_e, 1, stride, dim)
        return _size(e - b, stride), _np_slice(b, e, stride)
    if shrink:
        return 1, None
    if masked_b and masked_e and dim > 0:
        return _size(-dim if stride < 0 else dim, stride), None
    return None, None


def _canonical(x: int, masked: bool, c: int, stride: int, dim: int) -> int:
    lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)
    if masked:
        return (lo, hi)[c] if stride > 0 else (lo, hi)[(c + 1) & 1]
    x = x + dim if x < 0 else x
    return lo if x < lo else hi if x > hi else x


def _size(interval: int, stride: int) -> int:
    if interval == 0 or (interval < 0) != (stride < 0):
        return 0
    return interval // stride + (1 if interval % stride else 0)


def _np_slice(b: int, e: int, stride: int) -> slice:
    """A Python slice equal to TF's canonical [b, e) with `stride` (-1 means 'before 0')."""
    if stride < 0:
        if b < 0:
            return slice(0, 0, 1)
        return slice(b, None if e < 0 else e, stride)
    return slice(b, e, stride)


__all__ = ["validate", "DenseSlice", "StridedSliceError"]
