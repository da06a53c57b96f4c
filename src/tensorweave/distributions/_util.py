"""Shared helpers: parameter conversion to one float dtype and batch shapes by broadcast."""

from __future__ import annotations

import numpy as np

from tensorweave.distributions import _ops as o


def float_params(names, values, dtype_hint=None):
    """The values as tensors of one floating dtype (the first tensor's, else float32)."""
    dtype = dtype_hint
    for v in values:
        if hasattr(v, "dtype") and getattr(v.dtype, "is_floating", False):
            dtype = dtype or v.dtype.base_dtype
        elif isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind == "f":
            dtype = dtype or v.dtype.name
    out = [o.convert_to_tensor(v, name=n, dtype=dtype, dtype_hint="float32")
           for n, v in zip(names, values)]
    dt = out[0].dtype.base_dtype
    for n, t in zip(names, out):
        if t.dtype.base_dtype != dt:
            raise TypeError(f"{n}: expected {dt.name}, got {t.dtype.base_dtype.name}")
    return out


def static_batch(*tensors):
    shape = tensors[0].shape
    for t in tensors[1:]:
        shape = o.broadcast_static_shape(shape, t.shape)
    return shape


def dynamic_batch(*tensors):
    shape = o.shape(tensors[0])
    for t in tensors[1:]:
        shape = o.broadcast_dynamic_shape(shape, o.shape(t))
    return shape


def sample_shape_n(n, batch_shape_tensor):
    return o.concat([o.reshape(o.convert_to_tensor(n, dtype="int32"), [1]),
                     batch_shape_tensor], 0)


def nan_where(allow_nan_stats: bool, cond, value, name: str):
    """`value` with nan where `cond` (allow_nan_stats), else an assertion that not cond."""
    if not allow_nan_stats:
        from tensorweave.ops.control_flow_ops import Assert, with_dependencies
        from tensorweave.ops.math_ops import logical_not
        from tensorweave.ops.reduction_ops import reduce_all

        check = Assert(reduce_all(logical_not(cond)),
                       [f"{name} is undefined here (allow_nan_stats=False)"])
        return with_dependencies([check], value)
    nan = o.ones_like(value) * np.nan
    return o.where(cond, nan, value)


def positive(t, validate_args: bool):
    """`t`, checked to be > 0 when it runs if `validate_args` (TF's assert_positive)."""
    if not validate_args:
        return t
    from tensorweave.ops.control_flow_ops import Assert, with_dependencies
    from tensorweave.ops.reduction_ops import reduce_all

    check = Assert(reduce_all(o.greater(t, o.zeros_like(t))),
                   [f"Condition x > 0 did not hold element-wise: x = {t.name}", t])
    return with_dependencies([check], t)
