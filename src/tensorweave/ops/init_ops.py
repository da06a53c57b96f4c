"""Initializers (TF1's `init_ops`): objects that build an initial-value tensor for a shape.

Each is called as `initializer(shape, dtype=None, partition_info=None)` and builds its ops in
the current graph (random ones with the initializer's `seed`, through `get_seed`), so running
a variable's initializer again draws new values, as in TensorFlow.

NOTE: ops of other families (zeros, sign, transpose, ...) are reached through the public
namespace (`tf.zeros`), imported at call time.
"""

from __future__ import annotations

import math

import numpy as np

from tensorweave import dtypes
from tensorweave.ops import random_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant
from tensorweave.shapes import TensorShape


def _assert_float_dtype(dtype) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


def _dims(shape) -> list:
    """A static shape as a list of ints (TensorShape, list or tuple)."""
    if isinstance(shape, TensorShape):
        return shape.as_list()
    return [int(getattr(d, "value", d)) for d in shape]


class Initializer:
    """Base class: `__call__(shape, dtype=None, partition_info=None)` returns a Tensor."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict):
        return cls(**config)


class Zeros(Initializer):
    """Initializer producing tensors of zeros."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.creation_ops import zeros

        return zeros(shape, dtype if dtype is not None else self.dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializer producing tensors of ones."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.creation_ops import ones

        return ones(shape, dtype if dtype is not None else self.dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Initializer producing `value` (a scalar fills the shape; a list is reshaped/padded).

    Raises:
      TypeError: `value` is not a Python scalar, list, tuple or numpy array.
    """

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value: {type(value)} (expected Python "
                            "scalar, list or tuple of values, or numpy.ndarray).")
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = dtype if dtype is not None else self.dtype
        verify = self._verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=dtype, shape=_dims(shape), verify_shape=verify)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats)."""

    def __init__(self, minval=0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype if dtype is not None else self.dtype
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype,
                                         seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Samples from N(mean, stddev**2)."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype if dtype is not None else self.dtype
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal samples redrawn while more than two stddevs from the mean."""

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype if dtype is not None else self.dtype
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype,
                                           seed=self.seed)


class UniformUnitScaling(Initializer):
    """Uniform in ±sqrt(3 / input_size) * factor; input_size = prod(shape[:-1])."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor, self.seed = factor, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype if dtype is not None else self.dtype
        scale_shape = _dims(partition_info.full_shape if partition_info is not None else shape)
        input_size = max(float(np.prod(scale_shape[:-1], dtype=np.float64)), 1.0)
        max_val = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -max_val, max_val, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


def _compute_fans(shape) -> tuple[int, int]:
    """TF's fans: (in, out) of a matrix; a conv kernel's receptive field is prod(shape[:-2])."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive = 1.0
    for dim in shape[:-2]:
        receptive *= dim
    return int(shape[-2] * receptive), int(shape[-1] * receptive)


# scipy.stats.truncnorm.std(a=-2, b=2, loc=0., scale=1.)
_TRUNCATED_STD = 0.87962566103423978


class VarianceScaling(Initializer):
    """Samples with variance `scale / n`, n the fan-in, fan-out or their mean (`mode`).

    `distribution` is "truncated_normal" (legacy "normal" means the same),
    "untruncated_normal" or "uniform".
    Raises:
      ValueError: a non-positive scale, an unknown mode or distribution, a non-float dtype.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = dtype if dtype is not None else self.dtype
        scale_shape = _dims(partition_info.full_shape if partition_info is not None else shape)
        scale = self.scale / max(1.0, self._fan(*_compute_fans(scale_shape)))
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_STD
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype,
                                            seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def _fan(self, fan_in: int, fan_out: int) -> float:
        if self.mode == "fan_in":
            return fan_in
        if self.mode == "fan_out":
            return fan_out
        return (fan_in + fan_out) / 2.0

    def get_config(self) -> dict:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Glorot/Xavier uniform: limit sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Glorot/Xavier truncated normal: stddev sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix (shape flattened to [prod(shape[:-1]), shape[-1]]) * gain.

    Raises:
      ValueError: a shape of rank < 2, a non-float dtype.
    """

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain, self.seed = gain, seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        from tensorweave.ops.array_ops import reshape
        from tensorweave.ops.diag_ops import matrix_diag_part
        from tensorweave.ops.joining_ops import transpose
        from tensorweave.ops.math_ops import sign

        dtype = dtype if dtype is not None else self.dtype
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), int(dims[-1])
        flat = (cols, rows) if rows < cols else (rows, cols)
        a = random_ops.random_normal(flat, dtype=dtype, seed=self.seed)
        q, r = apply_op("Qr", a, full_matrices=False)
        q *= sign(matrix_diag_part(r))
        if rows < cols:
            q = transpose(q, [1, 0])
        return self.gain * reshape(q, dims)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only).

    NOTE: built as one constant (`gain * eye`), with TF's values but not its eye/diag ops.
    """

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        full = _dims(partition_info.full_shape if partition_info is not None else shape)
        if len(full) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = dtypes.as_dtype(dtype if dtype is not None else self.dtype)
        value = self.gain * np.eye(*full, dtype=np.float64)
        if partition_info is not None:
            off = partition_info.var_offset
            dims = _dims(shape)
            value = value[off[0]:off[0] + dims[0], off[1]:off[1] + dims[1]]
        return constant(value.astype(dtype.np_dtype), dtype=dtype)

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


# TF1's lower-case names.
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity

__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal",
    "TruncatedNormal", "UniformUnitScaling", "VarianceScaling", "GlorotUniform",
    "GlorotNormal", "Orthogonal", "Identity", "zeros_initializer", "ones_initializer",
    "constant_initializer", "random_uniform_initializer", "random_normal_initializer",
    "truncated_normal_initializer", "uniform_unit_scaling_initializer",
    "variance_scaling_initializer", "glorot_uniform_initializer", "glorot_normal_initializer",
    "orthogonal_initializer", "identity_initializer", "he_normal", "he_uniform",
    "lecun_normal", "lecun_uniform",
]
