"""TF's tensor_util entry points: `make_tensor_proto` and `make_ndarray` (TensorProto <->
numpy, via proto/convert.py), and `constant_value` of a graph tensor."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.proto import convert


def make_tensor_proto(values, dtype=None, shape=None, verify_shape=False, allow_broadcast=False):
    """A TensorProto holding `values` (cast to `dtype`), reshaped or broadcast to `shape`.

    Raises:
      TypeError: values that do not convert to `dtype`.
      ValueError: `values` does not fit `shape` (or differs from it, with verify_shape).
    """
    dt = None if dtype is None else dtypes.as_dtype(dtype)
    arr = np.asarray(values, dtype=None if dt is None or dt == dtypes.string else dt.np_dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        if verify_shape and list(arr.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
        if arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        elif arr.size == 1 or allow_broadcast:
            arr = np.broadcast_to(arr.reshape(()) if arr.size == 1 else arr, shape)
        else:
            raise ValueError(f"Too many elements provided. Needed at most {int(np.prod(shape))}, "
                             f"but received {arr.size}")
    return convert.tensor_to_proto(np.array(arr, copy=True, order="C"), dt)


def make_ndarray(tensor) -> np.ndarray:
    """The numpy array a TensorProto holds."""
    return convert.tensor_from_proto(tensor)


__all__ = ["make_tensor_proto", "make_ndarray"]
