"""`tf.train.Example` and friends, and the feature configs the parse ops take.

The proto classes are our generated ones (`tensorweave.proto.example_pb2`/`feature_pb2`,
TensorFlow's field numbers), so `Example.SerializeToString()` bytes are TensorFlow's bytes and
vice versa. Only three value kinds exist on the wire: `BytesList` (tf.string), `FloatList`
(tf.float32) and `Int64List` (tf.int64).

Feature configs (TF1's namedtuples, same fields and defaults):
  * `FixedLenFeature(shape, dtype, default_value=None)`: a dense tensor of `shape`; without a
    default the feature is required.
  * `VarLenFeature(dtype)`: a `SparseTensor` of all the values.
  * `FixedLenSequenceFeature(shape, dtype, allow_missing=False, default_value=None)`: a dense
    tensor `[None] + shape`, padded (batched) with `default_value` (0 or b"" when None).
  * `SparseFeature(index_key, value_key, dtype, size, already_sorted=False)`.
"""

from __future__ import annotations

import collections

from tensorweave import dtypes
from tensorweave.proto.example_pb2 import Example, SequenceExample
from tensorweave.proto.feature_pb2 import (
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)

__all__ = [
    "Example", "SequenceExample", "Features", "Feature", "FeatureList", "FeatureLists",
    "BytesList", "FloatList", "Int64List", "FixedLenFeature", "VarLenFeature",
    "FixedLenSequenceFeature", "SparseFeature", "WIRE_DTYPES", "feature_of",
]

WIRE_DTYPES = (dtypes.float32, dtypes.int64, dtypes.string)


class FixedLenFeature(collections.namedtuple(
        "FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A fixed-length feature parsed into a dense tensor of `shape`."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature parsed into a SparseTensor."""

    __slots__ = ()


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A variable number of fixed-shape blocks, parsed into a dense `[None] + shape` tensor."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor built from an index feature (or several) and a value feature."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def feature_of(values, dtype=None) -> Feature:
    """A `Feature` holding `values` (a list/array or a scalar): a BytesList for bytes/str, an
    Int64List for integers/bools, a FloatList for floats; `dtype` forces the kind.

    Raises:
      TypeError: values of a kind the wire format cannot hold.
    """
    import numpy as np

    # NOTE: object dtype keeps bytes whole (numpy's "S" dtype drops trailing NULs).
    if isinstance(values, (bytes, str)):
        values = [values]
    arr = np.asarray(values, dtype=object) if _holds_strings(values) else np.asarray(values)
    flat = arr.reshape(-1)
    kind = dtypes.as_dtype(dtype).base_dtype if dtype is not None else _infer_kind(arr)
    if kind == dtypes.string:
        items = [v.encode() if isinstance(v, str) else bytes(v) for v in flat.tolist()]
        return Feature(bytes_list=BytesList(value=items))
    if kind == dtypes.int64:
        return Feature(int64_list=Int64List(value=flat.astype(np.int64).tolist()))
    if kind == dtypes.float32:
        return Feature(float_list=FloatList(value=flat.astype(np.float32).tolist()))
    raise TypeError(f"An Example feature holds float32, int64 or string values, not {kind.name}")


def _holds_strings(values) -> bool:
    if isinstance(values, (list, tuple)):
        return any(isinstance(v, (bytes, str, bytearray)) or _holds_strings(v) for v in values)
    return False


def _infer_kind(arr) -> dtypes.DType:
    k = arr.dtype.kind
    if k in "US" or (k == "O" and all(isinstance(v, (bytes, str, bytearray))
                                      for v in arr.reshape(-1).tolist())):
        return dtypes.string
    if k in "iub":
        return dtypes.int64
    if k == "f":
        return dtypes.float32
    raise TypeError(f"Cannot store values of numpy dtype {arr.dtype} in an Example feature")
