"""`SparseTensor`: a sparse value as three dense tensors, and its session value.

`SparseTensor(indices, values, dense_shape)`: `indices` is an int64 `[N, rank]` matrix of
the non-default positions, `values` the `[N]` values there, `dense_shape` the int64 `[rank]`
dense shape. `Session.run` fetches a SparseTensor as a `SparseTensorValue` namedtuple and
accepts a `SparseTensorValue` (or any `(indices, values, dense_shape)` triple) as its feed.
A SparseTensor is not a Tensor: passing one where a Tensor is needed raises TypeError.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorweave import dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework.fetch_conversions import register_session_run_conversion_functions
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.shape_inference import shape_from_tensor
from tensorweave.shapes import TensorShape

__all__ = ["SparseTensor", "SparseTensorValue", "is_sparse", "sparse_placeholder"]

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor built from `indices` (int64 [N, rank]), `values` ([N]) and
    `dense_shape` (int64 [rank]); each may be a Tensor or a value convertible to one.

    Raises:
      TypeError / ValueError: an argument cannot be converted (wrong dtype or shape).
    """

    def __init__(self, indices, values, dense_shape):
        with name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = tensor_conversion.convert_to_tensor(
                indices, name="indices", dtype=dtypes.int64)
            self._values = tensor_conversion.convert_to_tensor(values, name="values")
            self._dense_shape = tensor_conversion.convert_to_tensor(
                dense_shape, name="dense_shape", dtype=dtypes.int64)
        self._check_ranks()
        self._static_shape = shape_from_tensor(self._dense_shape)

    def _check_ranks(self) -> None:
        for t, rank, what in ((self._indices, 2, "indices"), (self._values, 1, "values"),
                              (self._dense_shape, 1, "dense_shape")):
            nd = t.shape.ndims
            if nd is not None and nd != rank:
                raise ValueError(f"SparseTensor {what} must have rank {rank}, got shape "
                                 f"{t.shape}")

    @classmethod
    def from_value(cls, sparse_tensor_value) -> SparseTensor:
        """A SparseTensor from a SparseTensorValue (or returns a SparseTensor unchanged)."""
        if isinstance(sparse_tensor_value, SparseTensor):
            return sparse_tensor_value
        v = sparse_tensor_value
        return cls(indices=v.indices, values=v.values, dense_shape=v.dense_shape)

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._indices.graph

    @property
    def shape(self) -> TensorShape:
        """The static dense shape (partially known when dense_shape is not a constant)."""
        return self._static_shape

    def get_shape(self) -> TensorShape:
        return self._static_shape

    def consumers(self) -> list:
        ops: list = []
        for t in (self._indices, self._values, self._dense_shape):
            ops.extend(o for o in t.consumers() if o not in ops)
        return ops

    def eval(self, feed_dict=None, session=None) -> SparseTensorValue:
        """Runs the default (or given) session and returns the SparseTensorValue."""
        from tensorweave.framework.default_session import session_for

        return session_for(self.graph, session).run(self, feed_dict)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")


def is_sparse(x) -> bool:
    """Whether `x` is a SparseTensor or a SparseTensorValue."""
    return isinstance(x, (SparseTensor, SparseTensorValue))


def sparse_placeholder(dtype, shape=None, name=None) -> SparseTensor:
    """TF1 `tf.sparse_placeholder`: a SparseTensor fed as a SparseTensorValue.

    Its parts are placeholders named `<name>/values`, `<name>/indices` and `<name>/shape`; a
    fully known `shape` makes the dense shape a default that need not be fed.
    """
    from tensorweave.ops.apply import apply_op

    def sub(part):
        return f"{name}/{part}" if name is not None else None

    shape = TensorShape(shape)
    rank = shape.ndims
    if shape.is_fully_defined():
        dense_shape = apply_op("PlaceholderWithDefault",
                               np.array(shape.as_list(), np.int64), dtype=dtypes.int64,
                               shape=TensorShape([rank]), name=sub("shape"))
    else:
        dense_shape = apply_op("Placeholder", dtype=dtypes.int64, shape=TensorShape([rank]),
                               name=sub("shape"))
    values = apply_op("Placeholder", dtype=dtypes.as_dtype(dtype), shape=TensorShape([None]),
                      name=sub("values"))
    indices = apply_op("Placeholder", dtype=dtypes.int64, shape=TensorShape([None, rank]),
                       name=sub("indices"))
    st = SparseTensor(indices, values, dense_shape)
    if shape.ndims is not None:
        st._static_shape = shape.merge_with(st._static_shape)
    return st


# -- session and conversion hooks ------------------------------------------------------------
def _fetch_parts(st: SparseTensor):
    return [st.indices, st.values, st.dense_shape], lambda vals: SparseTensorValue(*vals)


def _feed_parts(st: SparseTensor, value):
    if value is None:
        return [(st.indices, None), (st.values, None), (st.dense_shape, None)]
    if isinstance(value, SparseTensor):
        raise TypeError("The value of a feed cannot be a tf.SparseTensor object; feed a "
                        "SparseTensorValue.")
    try:
        indices, values, dense_shape = value
    except (TypeError, ValueError):
        raise TypeError(f"A SparseTensor is fed with a SparseTensorValue or an (indices, "
                        f"values, dense_shape) triple, not {type(value).__name__}") from None
    return [(st.indices, indices), (st.values, values), (st.dense_shape, dense_shape)]


def _no_dense_conversion(value, dtype=None, name=None, as_ref=False):
    raise TypeError(f"Cannot convert a SparseTensor to a Tensor ({value!r}); use "
                    "tf.sparse.to_dense or the SparseTensor's .values")


register_session_run_conversion_functions(SparseTensor, _fetch_parts, _feed_parts)
tensor_conversion.register_tensor_conversion_function(SparseTensor, _no_dense_conversion)
