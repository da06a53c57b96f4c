"""`Const`: values embedded in the graph, and `tf.constant`."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import register_fallback_conversion
from tensorweave.ops.apply import add_op
from tensorweave.ops.registry import OPS, register_op
from tensorweave.ops.shape_inference import register_constant_evaluator
from tensorweave.shapes import TensorShape


def _const_shape(ctx):
    return TensorShape(ctx.attr("value").shape)


register_op("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"],
            shape_fn=_const_shape)


@register_constant_evaluator("Const")
def _const_value(op):
    return op._attrs["value"]


def to_numpy(value, dtype: dtypes.DType | None = None) -> np.ndarray:
    """A numpy array of `value` with TF's inference rules (Python floats → float32, ints → int32).

    Raises:
      TypeError: the value cannot be represented as `dtype`.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
        if dtype == dtypes.string:
            return _string_array(value)
        arr = np.asarray(value)
        if arr.dtype.kind in "USO" and dtype != dtypes.string:
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                            f"'{type(value).__name__}' instead.")
        if arr.dtype.kind == "f" and dtype.is_integer:
            if not np.all(np.equal(np.mod(arr, 1), 0)):
                raise TypeError(f"Expected {dtype.name}, got {value!r} of type "
                                f"'{type(value).__name__}' instead.")
        if arr.dtype.kind == "c" and not dtype.is_complex:
            raise TypeError(f"Expected {dtype.name}, got complex value {value!r}.")
        return arr.astype(dtype.np_dtype, copy=False)
    if isinstance(value, np.ndarray):
        # NOTE: an object array of str is text too (pandas columns are); TF stores bytes.
        text = value.dtype.kind in "US" or (value.dtype == object and value.size > 0
                                            and isinstance(value.flat[0], str))
        return _string_array(value) if text else value
    if isinstance(value, np.generic):
        return np.asarray(value)
    arr = np.asarray(value)
    if arr.dtype.kind in "USO":
        return _string_array(value)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64 and arr.size and arr.min() >= -(2**31) and arr.max() < 2**31:
        return arr.astype(np.int32)
    if arr.dtype == np.int64 and not arr.size:
        return arr.astype(np.int32)
    return arr


def _string_array(value) -> np.ndarray:
    """An object array of bytes. Raises TypeError for elements that are not text."""
    arr = np.asarray(value, dtype=object)
    flat = [v.encode() if isinstance(v, str) else bytes(v) if isinstance(v, bytearray) else v
            for v in arr.reshape(-1)]
    bad = next((v for v in flat if not isinstance(v, bytes)), None)
    if bad is not None:
        raise TypeError(f"Failed to convert object of type {type(bad).__name__} to Tensor. "
                        f"Contents: {bad!r}. Consider casting elements to a supported type.")
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(arr.shape)


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """TF1 `tf.constant`: a Const op holding `value` (reshaped or filled to `shape`).

    Raises:
      TypeError: `value` does not fit `dtype`.
      ValueError: `value` does not fit `shape`.
    """
    arr = to_numpy(value, dtype)
    if shape is not None:
        arr = _fit_shape(arr, shape, verify_shape)
    from tensorweave.framework.graph import get_default_graph

    out_dtype = dtypes.as_dtype(dtype).base_dtype if dtype is not None else \
        dtypes.as_dtype(arr.dtype)
    # NOTE: the graph owns its constants; the caller's array may change later.
    arr = np.array(arr, copy=True)
    arr.flags.writeable = False
    op = add_op(get_default_graph(), OPS.lookup("Const"), name, [],
                {"value": arr, "dtype": out_dtype}, [out_dtype])
    return op.outputs[0]


def _fit_shape(arr: np.ndarray, shape, verify: bool) -> np.ndarray:
    shape = [int(d) for d in (shape if isinstance(shape, (list, tuple)) else
                              TensorShape(shape).as_list())]
    n = int(np.prod(shape)) if shape else 1
    if arr.size == n:
        return arr.reshape(shape)
    if verify:
        raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
    if arr.size == 1:
        return np.broadcast_to(arr.reshape(()), shape).copy()
    if 0 < arr.size < n:
        flat = np.concatenate([arr.reshape(-1), np.repeat(arr.reshape(-1)[-1:], n - arr.size)])
        return flat.reshape(shape)
    raise ValueError(f"Too many elements provided. Needed at most {n}, but received "
                     f"{arr.size}")


register_fallback_conversion(constant)
