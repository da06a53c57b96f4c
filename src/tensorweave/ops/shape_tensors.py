"""Static views of small int tensors that hold shapes (TF's `constant_value_as_shape`).

`partial_vector(t)` gives what is known of a 1-D int tensor before running it: a list whose
entries are ints (known values, -1 included), `Dim` markers (unknown, but known to equal
dimension `i` of some tensor, as `tf.shape(x)[i]` is), or None (unknown). It looks through
Const, Shape, Pack, ConcatV2, StridedSlice, Identity and Cast, so
`tf.reshape(x, [tf.shape(x)[0], -1])` keeps its static shape. `partial_shape(t)` turns that
into a TensorShape, and `small_enough` bounds the values constant evaluators materialize.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tensorweave.ops.shape_inference import constant_value
from tensorweave.shapes import TensorShape

# Evaluators materialize at most this many elements (so tf.zeros([4096, 4096]) stays a Fill).
MAX_CONSTANT_ELEMENTS = 1 << 16
_PASS_THROUGH = frozenset(["Identity", "StopGradient", "Snapshot", "Cast"])


@dataclass(frozen=True)
class Dim:
    """An unknown value known to equal dimension `index` of `tensor`."""

    tensor: object
    index: int

    def same(self, other) -> bool:
        return isinstance(other, Dim) and other.tensor is self.tensor and \
            other.index == self.index


def input_tensor(ctx, i: int):
    """Input `i` of a shape function's op, as a Tensor (for looking through its producer)."""
    return ctx.input_tensor(i)


def small_enough(n) -> bool:
    return n is not None and int(n) <= MAX_CONSTANT_ELEMENTS


def partial_vector(tensor) -> list | None:
    """What is known of 1-D int `tensor`'s entries, or None when even its length is unknown."""
    value = constant_value(tensor)
    if value is not None:
        return [int(v) for v in np.reshape(value, [-1])] if np.ndim(value) == 1 else None
    op = tensor.op
    fn = _PARTIAL.get(op.type) if tensor.value_index == 0 else None
    out = fn(op) if fn is not None else None
    if out is None and op.type == "ShapeN":
        out = _shape_entries(op.inputs[tensor.value_index])
    if out is None:
        dims = tensor.shape.as_tuple()
        if dims is not None and len(dims) == 1 and small_enough(dims[0]):
            return [None] * dims[0]
    return out


def partial_scalar(tensor):
    """A scalar int tensor's value: an int, a `Dim`, or None."""
    value = constant_value(tensor)
    if value is not None:
        return int(value) if np.ndim(value) == 0 else None
    op = tensor.op
    if op.type in _PASS_THROUGH and tensor.value_index == 0:
        return partial_scalar(op.inputs[0])
    if op.type == "StridedSlice" and tensor.value_index == 0:
        picked = strided_pick(op)
        return picked[0] if picked is not None and len(picked) == 1 and \
            op.get_attr("shrink_axis_mask") & 1 else None
    return None


def partial_shape(tensor) -> TensorShape:
    """The shape a 1-D shape tensor describes, with unknown (or negative) entries as None."""
    entries = partial_vector(tensor)
    if entries is None:
        return TensorShape(None)
    return TensorShape([e if isinstance(e, int) and e >= 0 else None for e in entries])


def _shape_entries(x) -> list | None:
    dims = x.shape.as_tuple()
    if dims is None:
        return None
    return [d if d is not None else Dim(x, i) for i, d in enumerate(dims)]


def _shape(op):
    return _shape_entries(op.inputs[0])


def _pack(op):
    if op.get_attr("axis") != 0:
        return None
    return [partial_scalar(t) for t in op.inputs]


def _concat(op):
    axis = constant_value(op.inputs[-1])
    if axis is None or int(axis) not in (0, -1):
        return None
    out: list = []
    for t in op.inputs[:-1]:
        part = partial_vector(t)
        if part is None:
            return None
        out.extend(part)
    return out


def _pass_through(op):
    return partial_vector(op.inputs[0])


def strided_pick(op):
    """Entries of a 1-D partial vector picked by a constant StridedSlice, or None."""
    source = partial_vector(op.inputs[0])
    spec = [constant_value(t) for t in op.inputs[1:]]
    if source is None or any(s is None for s in spec):
        return None
    from tensorweave.ops.strided_slice_spec import StridedSliceError, validate

    try:
        dense = validate(*[np.reshape(s, [-1]).tolist() for s in spec], (len(source),),
                         **{k: op.get_attr(k) for k in _MASKS})
    except StridedSliceError:
        return None
    if dense.index is None or any(item is None for item in dense.index):
        return None  # a new axis makes the result 2-D: not a shape vector
    picked = np.arange(len(source))[dense.index]
    return [source[i] for i in np.reshape(picked, [-1]).tolist()]


def _strided(op):
    if op.get_attr("shrink_axis_mask") & 1:
        return None  # a scalar
    return strided_pick(op)


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_PARTIAL = {"Shape": _shape, "Pack": _pack, "ConcatV2": _concat, "StridedSlice": _strided,
            **{t: _pass_through for t in _PASS_THROUGH}}

__all__ = ["Dim", "input_tensor", "partial_vector", "strided_pick", "partial_scalar",
           "partial_shape", "small_enough",
           "MAX_CONSTANT_ELEMENTS"]
