"""`tf.RaggedTensor` in graph mode: a composite of ordinary tensors, as SparseTensor is.

A RaggedTensor is `values` (a Tensor, or a RaggedTensor for more ragged dimensions) split
into rows by `row_splits` (int64 `[nrows + 1]`, starting at 0, nondecreasing, ending at
`len(values)`): row `i` is `values[row_splits[i]:row_splits[i + 1]]`. Every method builds
ordinary ops (Cumsum, ScatterNd, Gather, ...). `Session.run` fetches one as a
`RaggedTensorValue` (`to_list()`, `values`, `row_splits`, `flat_values`) and accepts one as
its feed. Row-partition tensors are int64 (int32 ones are cast).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework.fetch_conversions import register_session_run_conversion_functions
from tensorweave.framework.scopes import name_scope
from tensorweave.ops import check_ops, math_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.control_flow_ops import with_dependencies
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import Dimension, TensorShape

__all__ = ["RaggedTensor", "RaggedTensorValue", "is_ragged"]

_I64 = dtypes.int64


def _i64(x, name):
    t = tensor_conversion.convert_to_tensor(x, name=name)
    return t if t.dtype == _I64 else math_ops.cast(t, _I64)


def _vector_check(t, what: str) -> None:
    if t.shape.ndims is not None and t.shape.ndims != 1:
        raise ValueError(f"{what} must be a vector (rank 1), got shape {t.shape}")


def _convert_values(values):
    if isinstance(values, RaggedTensor):
        return values
    return tensor_conversion.convert_to_tensor(values, name="values")


class RaggedTensor:
    """Rows of varying length: `values` split by `row_splits` (see the module docstring).
    Build one with the `from_*` class methods, never the constructor directly."""

    def __init__(self, values, row_splits, internal=False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        self._values, self._row_splits = values, row_splits

    # -- factories ------------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True) -> RaggedTensor:
        """Rows `values[row_splits[i]:row_splits[i + 1]]`. With `validate`, the splits are
        checked when the graph runs (InvalidArgumentError): they start at 0, do not decrease
        and end at the number of values."""
        with name_scope(name, "RaggedFromRowSplits", [values, row_splits]):
            values = _convert_values(values)
            splits = _i64(row_splits, "row_splits")
            _vector_check(splits, "row_splits")
            if validate:
                splits = _validated(splits, values)
            return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True) -> RaggedTensor:
        """Row `i` holds the next `row_lengths[i]` values."""
        with name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
            lengths = _i64(row_lengths, "row_lengths")
            _vector_check(lengths, "row_lengths")
            splits = apply_op("ConcatV2", [np.zeros(1, np.int64),
                                           apply_op("Cumsum", lengths, 0)], 0)
            return cls.from_row_splits(values, splits, validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None,
                          validate=True) -> RaggedTensor:
        """`values[j]` goes to row `value_rowids[j]` (sorted ascending); `nrows` rows
        (default: the last row id + 1)."""
        with name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
            rowids = _i64(value_rowids, "value_rowids")
            _vector_check(rowids, "value_rowids")
            if nrows is None:
                last = apply_op("Max", apply_op("ConcatV2", [np.array([-1], np.int64), rowids],
                                                0), 0)
                nrows = last + 1
            nrows = _i64(nrows, "nrows")
            ones = apply_op("OnesLike", rowids)
            lengths = apply_op("UnsortedSegmentSum", ones, rowids, nrows)
            return cls.from_row_lengths(values, lengths, validate=validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None,
                               validate=True) -> RaggedTensor:
        """`flat_values` split by each of `nested_row_splits`, innermost last."""
        with name_scope(name, "RaggedFromNestedRowSplits", [flat_values]):
            out = flat_values
            for splits in reversed(list(nested_row_splits)):
                out = cls.from_row_splits(out, splits, validate=validate)
            return out

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1,
                    name=None) -> RaggedTensor:
        """A dense `tensor` (rank > ragged_rank) as ragged: every row whole, or cut to
        `lengths[i]`, or with its trailing `padding` elements dropped (2-D with ragged_rank 1
        for those two). Raises ValueError for an unsupported combination."""
        with name_scope(name, "RaggedFromTensor", [tensor, lengths, padding]):
            tensor = tensor_conversion.convert_to_tensor(tensor, name="tensor")
            rank = tensor.shape.ndims
            if rank is None or rank <= ragged_rank:
                raise ValueError(f"tensor's rank must be known and greater than ragged_rank "
                                 f"({ragged_rank}); got shape {tensor.shape}")
            if lengths is not None or padding is not None:
                if ragged_rank != 1 or (lengths is not None and padding is not None):
                    raise ValueError("from_tensor: give at most one of lengths and padding, "
                                     "with ragged_rank=1")
                return _from_tensor_cut(cls, tensor, lengths, padding)
            return _from_tensor_uniform(cls, tensor, ragged_rank)

    # -- parts ----------------------------------------------------------------------------------
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v.values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_splits)
            rt = rt.values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self) -> dtypes.DType:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return _I64

    @property
    def shape(self) -> TensorShape:
        """`[nrows, None, ...]`: the outer dimension when known, ragged dimensions None."""
        n = self._row_splits.shape.as_list()[0]
        nrows = Dimension(None) if n is None else Dimension(n - 1)
        inner = self._values.shape
        rest = [None] + (inner.as_list()[1:] if inner.ndims is not None else [])
        if inner.ndims is None:
            return TensorShape(None)
        return TensorShape([nrows] + rest)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def graph(self):
        return self._row_splits.graph

    # -- row partition --------------------------------------------------------------------------
    def nrows(self, out_type=_I64, name=None):
        with name_scope(name, "RaggedNRows", [self]):
            n = self._row_splits.shape.as_list()[0]
            if n is not None:
                return tensor_conversion.convert_to_tensor(n - 1, dtype=out_type)
            size = apply_op("Size", self._row_splits, out_type=out_type)
            return size - tensor_conversion.convert_to_tensor(1, dtype=out_type)

    def row_starts(self, name=None):
        with name_scope(name, "RaggedRowStarts", [self]):
            return self._row_splits[:-1]

    def row_limits(self, name=None):
        with name_scope(name, "RaggedRowLimits", [self]):
            return self._row_splits[1:]

    def row_lengths(self, axis=1, name=None):
        """The length of each row (axis 1); deeper axes give a RaggedTensor of lengths."""
        if axis != 1:
            if axis < 1 or not isinstance(self._values, RaggedTensor):
                raise ValueError(f"row_lengths: axis {axis} out of range")
            return self.with_values(self._values.row_lengths(axis - 1, name))
        with name_scope(name, "RaggedRowLengths", [self]):
            return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self, name=None):
        """For each value, the index of its row."""
        with name_scope(name, "RaggedValueRowIds", [self]):
            return _rowids(self._row_splits, _nvals(self._values))

    # -- rebuilding -----------------------------------------------------------------------------
    def with_values(self, new_values) -> RaggedTensor:
        return RaggedTensor(_convert_values(new_values), self._row_splits, internal=True)

    def with_flat_values(self, new_values) -> RaggedTensor:
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # -- conversion -----------------------------------------------------------------------------
    def to_tensor(self, default_value=None, name=None):
        """The dense tensor, each ragged dimension padded to its longest row with
        `default_value` (default zero / empty string)."""
        with name_scope(name, "RaggedToTensor", [self]):
            inner = self._values.to_tensor(default_value) if isinstance(
                self._values, RaggedTensor) else self._values
            return _pad_rows(self, inner, default_value)

    def to_sparse(self, name=None) -> SparseTensor:
        """The SparseTensor of the same values, dense shape the padded one's."""
        with name_scope(name, "RaggedToSparse", [self]):
            return _to_sparse(self)

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    def consumers(self) -> list:
        return list(self.flat_values.consumers())


def is_ragged(x) -> bool:
    return isinstance(x, (RaggedTensor, RaggedTensorValue))


def _validated(splits, values):
    nvals = _nvals(values)
    checks = [check_ops.assert_equal(splits[0], np.int64(0),
                                     message="Arguments to from_row_splits do not form a "
                                             "valid RaggedTensor: zero"),
              check_ops.assert_non_negative(splits[1:] - splits[:-1],
                                            message="Arguments to from_row_splits do not form "
                                                    "a valid RaggedTensor: monotonic"),
              check_ops.assert_equal(splits[-1], nvals,
                                     message="Arguments to from_row_splits do not form a "
                                             "valid RaggedTensor: nvals")]
    return with_dependencies(checks, splits)


def _nvals(values):
    if isinstance(values, RaggedTensor):
        return values.nrows()
    return apply_op("Shape", values, out_type=_I64)[0]


def _rowids(splits, nvals):
    """Row id of each of `nvals` values: a 1 at each row's end, cumulated (empty rows add
    several 1s at one place)."""
    ends = splits[1:-1]
    marks = apply_op("UnsortedSegmentSum", apply_op("OnesLike", ends), ends, nvals + 1)
    return apply_op("Cumsum", marks[:-1], 0)


def _positions(rt):
    """(row id, column) of each value of `rt`."""
    nvals = _nvals(rt.values)
    rowids = _rowids(rt.row_splits, nvals)
    cols = apply_op("Range", np.int64(0), nvals, np.int64(1)) - \
        apply_op("GatherV2", rt.row_splits, rowids, 0)
    return rowids, cols


def _max_len(rt):
    lengths = rt.row_lengths()
    return apply_op("Max", apply_op("ConcatV2", [np.zeros(1, np.int64), lengths], 0), 0)


def _zero(dtype):
    return "" if dtype == dtypes.string else (False if dtype == dtypes.bool_ else 0)


def _pad_rows(rt, inner, default_value):
    """`[nrows, longest row, inner...]`: position (r, c) takes value `row_splits[r] + c` of
    `inner` when `c` is inside row r, else the fill row appended after the values."""
    fill = _zero(inner.dtype) if default_value is None else default_value
    inner_shape = apply_op("Shape", inner, out_type=_I64)[1:]
    fill_row = apply_op("Fill", apply_op("ConcatV2", [np.ones(1, np.int64), inner_shape], 0),
                        tensor_conversion.convert_to_tensor(fill, dtype=inner.dtype))
    padded = apply_op("ConcatV2", [inner, fill_row], 0)
    cols = apply_op("ExpandDims", apply_op("Range", np.int64(0), _max_len(rt), np.int64(1)), 0)
    starts = apply_op("ExpandDims", rt.row_splits[:-1], 1)
    inside = apply_op("Less", cols, apply_op("ExpandDims", rt.row_lengths(), 1))
    source = apply_op("SelectV2", inside, starts + cols, _nvals(inner))
    return apply_op("GatherV2", padded, source, 0)


def _to_sparse(rt) -> SparseTensor:
    rowids, cols = _positions(rt)
    if isinstance(rt.values, RaggedTensor):
        inner = _to_sparse(rt.values)
        inner_idx: Any = inner.indices   # NOTE: Tensor.__getitem__ is added by slicing_ops
        inner_shape: Any = inner.dense_shape
        outer = apply_op("Pack", [rowids, cols], axis=1)
        lead = apply_op("GatherV2", outer, inner_idx[:, 0], 0)
        indices = apply_op("ConcatV2", [lead, inner_idx[:, 1:]], 1)
        shape = apply_op("ConcatV2", [apply_op("Pack", [rt.nrows(), _max_len(rt)], axis=0),
                                      inner_shape[1:]], 0)
        return SparseTensor(indices, inner.values, shape)
    if rt.values.shape.ndims not in (None, 1):
        raise ValueError("to_sparse: values of rank > 1 are not supported; use to_tensor")
    return SparseTensor(apply_op("Pack", [rowids, cols], axis=1), rt.values,
                        apply_op("Pack", [rt.nrows(), _max_len(rt)], axis=0))


def _uniform_splits(nrows, ncols):
    return apply_op("Range", np.int64(0), nrows * ncols + 1, ncols)


def _from_tensor_uniform(cls, tensor, ragged_rank):
    shape = apply_op("Shape", tensor, out_type=_I64)
    flat_dims = apply_op("Prod", shape[:ragged_rank + 1], 0, keep_dims=True)
    values = apply_op("Reshape", tensor, apply_op("ConcatV2", [flat_dims,
                                                               shape[ragged_rank + 1:]], 0))
    out = values
    rows = apply_op("Prod", shape[:ragged_rank + 1], 0)
    for axis in range(ragged_rank, 0, -1):
        rows = apply_op("FloorDiv", rows, shape[axis])
        out = cls(out, _uniform_splits(rows, shape[axis]), internal=True)
        out._row_splits = _static_splits(out._row_splits, tensor.shape, axis)
    return out


def _static_splits(splits, dense_shape: TensorShape, axis: int):
    """Gives the splits their static length when the outer dimensions are known."""
    dims = dense_shape.as_list()[:axis]
    if all(d is not None for d in dims):
        splits.set_shape([int(np.prod(dims)) + 1])
    return splits


def _from_tensor_cut(cls, tensor, lengths, padding):
    if tensor.shape.ndims != 2:
        raise ValueError("from_tensor with lengths or padding needs a 2-D tensor")
    ncols = apply_op("Shape", tensor, out_type=_I64)[1]
    if padding is not None:
        is_pad = math_ops.cast(math_ops.equal(tensor, padding), _I64)
        trailing = apply_op("Sum", apply_op("Cumprod", is_pad, 1, reverse=True), 1)
        lengths = ncols - trailing
    lengths = _i64(lengths, "lengths")
    mask = apply_op("Less", apply_op("Range", np.int64(0), ncols, np.int64(1)),
                    apply_op("ExpandDims", lengths, 1))
    values = apply_op("GatherNd", tensor, apply_op("Where", mask))
    return cls.from_row_lengths(values, lengths, validate=False)


# -- session values -----------------------------------------------------------------------------
class RaggedTensorValue:
    """A fetched RaggedTensor: numpy `values` (or a nested RaggedTensorValue) and
    `row_splits`."""

    def __init__(self, values, row_splits):
        self._values, self._row_splits = values, np.asarray(row_splits)

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensorValue):
            v = v.values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out, v = [], self
        while isinstance(v, RaggedTensorValue):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        inner = self._values
        return 1 + (inner.ragged_rank if isinstance(inner, RaggedTensorValue) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self) -> tuple:
        inner = self._values.shape if not isinstance(self._values, RaggedTensorValue) else \
            self._values.shape
        return (len(self._row_splits) - 1, None) + tuple(inner[1:])

    def to_list(self) -> list:
        """Nested Python lists of the rows."""
        inner = self._values.to_list() if isinstance(self._values, RaggedTensorValue) else \
            np.asarray(self._values).tolist()
        s = self._row_splits.tolist()
        return [inner[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def __repr__(self) -> str:
        return f"<tf.RaggedTensorValue {self.to_list()}>"


def _fetch_parts(rt: RaggedTensor):
    splits = list(rt.nested_row_splits)

    def rebuild(vals):
        out = vals[-1]
        for s in reversed(vals[:-1]):
            out = RaggedTensorValue(out, s)
        return out

    return splits + [rt.flat_values], rebuild


def _feed_parts(rt: RaggedTensor, value):
    parts = list(rt.nested_row_splits) + [rt.flat_values]
    if value is None:
        return [(p, None) for p in parts]
    if not isinstance(value, RaggedTensorValue) or value.ragged_rank != rt.ragged_rank:
        raise TypeError(f"A RaggedTensor of ragged_rank {rt.ragged_rank} is fed with a "
                        f"RaggedTensorValue of the same ragged_rank, not {value!r}")
    return list(zip(parts, list(value.nested_row_splits) + [value.flat_values]))


def _no_dense_conversion(value, dtype=None, name=None, as_ref=False):
    raise TypeError(f"Cannot convert a RaggedTensor to a Tensor ({value!r}); use "
                    f".to_tensor(), .flat_values or tf.ragged.map_flat_values")


register_session_run_conversion_functions(RaggedTensor, _fetch_parts, _feed_parts)
tensor_conversion.register_tensor_conversion_function(RaggedTensor, _no_dense_conversion)
