"""`IndexedSlices`: a sparse gradient, as TF1 has it (rows `indices` of a dense tensor).

The gradient of `tf.gather(params, ids)` with respect to `params` is an IndexedSlices: the
rows `values[i]` belong at row `indices[i]` of a tensor of shape `dense_shape` (a row may
repeat; repeats add up). Optimizers apply it sparsely; anything else that uses it as a Tensor
densifies it with an `UnsortedSegmentSum` (the registered tensor conversion function). A
session fetch of an IndexedSlices returns an `IndexedSlicesValue` of numpy arrays.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)

# Densifying an IndexedSlices whose dense shape is larger than this many elements warns, as TF.
LARGE_SPARSE_NUM_ELEMENTS = 100_000_000

IndexedSlicesValue = collections.namedtuple("IndexedSlicesValue",
                                            ["values", "indices", "dense_shape"])
IndexedSlicesValue.__doc__ = "The numpy value of a fetched IndexedSlices."


class IndexedSlices:
    """A sparse representation of a set of tensor slices at given indices.

    Args:
      values: a Tensor of any dtype, shape `[D0, D1, ..., Dn]`.
      indices: a 1-D integer Tensor of shape `[D0]`: the row of each slice.
      dense_shape: an optional 1-D integer Tensor: the shape of the dense tensor.
    """

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        """The static dense shape (partially known)."""
        from tensorweave.ops.shape_tensors import partial_shape

        if self._dense_shape is None:
            from tensorweave.shapes import TensorShape

            return TensorShape(None)
        return partial_shape(self._dense_shape)

    def get_shape(self):
        return self.shape

    def consumers(self) -> list:
        return self._values.consumers()

    def __neg__(self) -> IndexedSlices:
        from tensorweave.ops.apply import apply_op

        return IndexedSlices(apply_op("Neg", self._values), self._indices, self._dense_shape)

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    __repr__ = __str__


def densify(value: IndexedSlices, dtype=None, name=None, as_ref: bool = False) -> Tensor:
    """The dense Tensor of `value`: `UnsortedSegmentSum(values, indices, dense_shape[0])`.

    Raises:
      ValueError: `dtype` differs from the values' dtype, `as_ref` is set, or `value` has no
        dense_shape.
    """
    from tensorweave.ops.apply import apply_op

    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                         f"for IndexedSlices with dtype {value.dtype.name}")
    if as_ref:
        raise ValueError("Cannot convert an IndexedSlices to a reference Tensor.")
    if value.dense_shape is None:
        raise ValueError("Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{value}")
    _warn_if_large(value)
    return apply_op("UnsortedSegmentSum", value.values, value.indices,
                    first_dim(value.dense_shape), name=name)


def first_dim(dense_shape):
    """`dense_shape[0]`: a Python int when known statically, else a StridedSlice."""
    from tensorweave.ops.apply import apply_op
    from tensorweave.ops.shape_inference import constant_value

    if not isinstance(dense_shape, Tensor):
        return int(np.asarray(dense_shape).reshape(-1)[0])
    known = constant_value(dense_shape)
    if known is not None:
        return np.asarray(known.reshape(-1)[0], dtype=dense_shape.dtype.base_dtype.np_dtype)
    return apply_op("StridedSlice", dense_shape, [0], [1], [1], shrink_axis_mask=1)


def _warn_if_large(value: IndexedSlices) -> None:
    shape = value.shape
    if shape.is_fully_defined():
        if int(np.prod(shape.as_tuple())) > LARGE_SPARSE_NUM_ELEMENTS:
            warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with "
                          f"{int(np.prod(shape.as_tuple()))} elements. This may consume a "
                          "large amount of memory.", stacklevel=3)
    elif value.values.shape.ndims is not None and value.values.shape.ndims > 1:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None, as_ref: bool = False):
    """`value` itself when it is an IndexedSlices (dtype checked), else `convert_to_tensor`."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} "
                             f"for IndexedSlices with dtype {value.dtype.name}: {value}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name, as_ref=as_ref)


def convert_n_to_tensor_or_indexed_slices(values, dtype=None, name=None,
                                          as_ref: bool = False) -> list:
    """Each of `values` converted; None entries stay None."""
    out = []
    for i, v in enumerate(values):
        n = None if name is None else f"{name}_{i}"
        out.append(None if v is None else
                   convert_to_tensor_or_indexed_slices(v, dtype=dtype, name=n, as_ref=as_ref))
    return out


# -- session integration -------------------------------------------------------------------
def _fetch(value: IndexedSlices):
    parts = [value.values, value.indices]
    if value.dense_shape is not None:
        parts.append(value.dense_shape)
    return parts, lambda got: IndexedSlicesValue(got[0], got[1],
                                                 got[2] if len(got) == 3 else None)


def _feed(key: IndexedSlices, value) -> list:
    parts = [key.values, key.indices]
    if key.dense_shape is not None:
        parts.append(key.dense_shape)
    if value is None:
        return [(p, None) for p in parts]
    return list(zip(parts, value))


def _register() -> None:
    from tensorweave.framework.fetch_conversions import register_session_run_conversion_functions

    register_tensor_conversion_function(IndexedSlices, densify)
    register_session_run_conversion_functions(IndexedSlices, _fetch, _feed)


_register()

__all__ = ["IndexedSlices", "IndexedSlicesValue", "convert_to_tensor_or_indexed_slices"]
