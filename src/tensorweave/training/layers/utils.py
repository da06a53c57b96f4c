"""Argument normalization and small helpers shared by the `tf.layers` classes.

Mirrors TF1/Keras `conv_utils`, `tf_utils.smart_cond`, `activations.get` and
`initializers.get` closely enough that layers built from the same arguments create the same
graph as TensorFlow.
"""

from __future__ import annotations

import re

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.shapes import TensorShape


# -- names ------------------------------------------------------------------------------------
def to_snake_case(name: str) -> str:
    """`Conv2DTranspose` → `conv2d_transpose` (Keras' rule; a leading `_` gets `private`)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


# -- argument normalization -------------------------------------------------------------------
def normalize_tuple(value, n: int, name: str) -> tuple:
    """An int becomes `(value,) * n`; a sequence must hold exactly n ints.

    Raises:
      ValueError: a sequence of the wrong length or with non-integers.
    """
    if isinstance(value, int):
        return (value,) * n
    try:
        value_tuple = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received: {value}") from None
    if len(value_tuple) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                         f"Received: {value}")
    for v in value_tuple:
        if not isinstance(v, int):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. "
                             f"Received: {value} including element {v} of type {type(v)}")
    return value_tuple


def normalize_padding(value, allow_causal: bool = False) -> str:
    """'VALID'/'valid' → 'valid'; 'same' likewise ('causal' only where allowed).

    Raises:
      ValueError: any other value.
    """
    padding = value.lower() if isinstance(value, str) else value
    allowed = {"valid", "same", "causal"} if allow_causal else {"valid", "same"}
    if padding not in allowed:
        raise ValueError('The `padding` argument must be a list/tuple or one of "valid", '
                         f'"same" (or "causal", only for `Conv1D). Received: {padding}')
    return padding


def normalize_data_format(value) -> str:
    """None → 'channels_last'; else 'channels_first' or 'channels_last' (any case).

    Raises:
      ValueError: any other value.
    """
    data_format = "channels_last" if value is None else str(value).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError('The `data_format` argument must be one of "channels_first", '
                         f'"channels_last". Received: {value}')
    return data_format


def convert_data_format(data_format: str, ndim: int) -> str:
    """'channels_last', rank 4 → 'NHWC' (and NWC / NDHWC, NC... for channels_first)."""
    spatial = {3: "W", 4: "HW", 5: "DHW"}.get(ndim)
    if spatial is None:
        raise ValueError(f"Input rank not supported: {ndim}")
    if data_format == "channels_last":
        return f"N{spatial}C"
    if data_format == "channels_first":
        return f"NC{spatial}"
    raise ValueError(f"Invalid data_format: {data_format}")


def conv_output_length(input_length, filter_size: int, padding: str, stride: int,
                       dilation: int = 1):
    """Output length of a convolution or pooling along one spatial axis (None stays None)."""
    if input_length is None:
        return None
    dilated = filter_size + (filter_size - 1) * (dilation - 1)
    if padding in ("same", "causal"):
        output_length = input_length
    elif padding == "valid":
        output_length = input_length - dilated + 1
    else:  # full
        output_length = input_length + dilated - 1
    return (output_length + stride - 1) // stride


def deconv_output_length(input_length, filter_size: int, padding: str, output_padding=None,
                         stride: int = 0, dilation: int = 1):
    """Output length of a transposed convolution along one spatial axis (Keras' rule)."""
    if input_length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return input_length * stride + max(filter_size - stride, 0)
        if padding == "full":
            return input_length * stride - (stride + filter_size - 2)
        return input_length * stride
    pad = {"same": filter_size // 2, "valid": 0, "full": filter_size - 1}[padding]
    return (input_length - 1) * stride + filter_size - 2 * pad + output_padding


# -- training flags ---------------------------------------------------------------------------
def constant_value(pred):
    """A Python bool for a bool, 0/1 or a constant-foldable tensor; None when only known at
    run time.

    Raises:
      TypeError: `pred` is neither a Tensor nor a Python bool, 0 or 1.
    """
    from tensorweave.ops.shape_inference import constant_value as tensor_value

    if isinstance(pred, Tensor):
        value = tensor_value(pred)
        return None if value is None else bool(value)
    if hasattr(pred, "_as_graph_element"):  # a Variable: a run-time value
        return None
    if isinstance(pred, bool) or pred in (0, 1):
        return bool(pred)
    raise TypeError(f"`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: "
                    f"{type(pred)}")


def smart_cond(pred, true_fn, false_fn, name=None):
    """`true_fn()` or `false_fn()` when `pred` is known now, else `tf.cond(pred, ...)`.

    Raises:
      TypeError: a function is not callable, or `pred` has an unusable type.
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("`true_fn` and `false_fn` must be callable.")
    value = constant_value(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    from tensorweave.ops.control_flow_ops import cond

    return cond(pred, true_fn=true_fn, false_fn=false_fn, name=name)


# -- activations and initializers by name -----------------------------------------------------
_ACTIVATIONS = {
    "relu": ("nn_ops", "relu"), "relu6": ("nn_ops", "relu6"), "elu": ("nn_ops", "elu"),
    "selu": ("nn_ops", "selu"), "softplus": ("nn_ops", "softplus"),
    "softsign": ("nn_ops", "softsign"), "softmax": ("nn_ops", "softmax"),
    "sigmoid": ("math_ops", "sigmoid"), "tanh": ("math_ops", "tanh"),
    "exponential": ("math_ops", "exp"),
}


def get_activation(identifier):
    """A callable activation: None → None (linear), a callable as is, or a Keras name
    ("relu", "tanh", "linear", ...).

    Raises:
      ValueError: an unknown name or a non-callable object.
    """
    if identifier is None or callable(identifier):
        return identifier
    if identifier == "linear":
        return None
    if identifier in _ACTIVATIONS:
        import importlib

        module, fn = _ACTIVATIONS[identifier]
        return getattr(importlib.import_module(f"tensorweave.ops.{module}"), fn)
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


_INITIALIZERS = {
    "zeros": "Zeros", "ones": "Ones", "glorot_uniform": "GlorotUniform",
    "glorot_normal": "GlorotNormal", "random_normal": "RandomNormal",
    "random_uniform": "RandomUniform", "truncated_normal": "TruncatedNormal",
    "orthogonal": "Orthogonal", "identity": "Identity",
}


def get_initializer(identifier):
    """An initializer object or callable as is, or one named as Keras names them
    ("glorot_uniform", "zeros", "he_normal", ...).

    Raises:
      ValueError: an unknown name.
    """
    if identifier is None or callable(identifier):
        return identifier
    from tensorweave.ops import init_ops

    if identifier in _INITIALIZERS:
        return getattr(init_ops, _INITIALIZERS[identifier])()
    if identifier in ("he_normal", "he_uniform", "lecun_normal", "lecun_uniform"):
        return getattr(init_ops, identifier)()
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")


# -- input specs ------------------------------------------------------------------------------
class InputSpec:
    """What a layer accepts: dtype, exact/min/max rank, and fixed sizes of some axes."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        self.shape = None if shape is None else TensorShape(shape).as_tuple()
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape),
                                         ("ndim", self.ndim), ("max_ndim", self.max_ndim),
                                         ("min_ndim", self.min_ndim), ("axes", self.axes or None))
                 if v is not None]
        return f"InputSpec({', '.join(parts)})"


def assert_input_compatibility(spec, x, layer_name: str) -> None:
    """Checks tensor `x` against `spec` (None: anything goes).

    Raises:
      ValueError: wrong rank or a fixed axis of another size, worded as Keras words it.
    """
    if spec is None:
        return
    dims = x.shape.as_tuple()
    shape = "None" if dims is None else str(tuple(dims))
    prefix = f'Input 0 of layer "{layer_name}" is incompatible with the layer: '
    if dims is None:
        return
    ndim = len(dims)
    if spec.ndim is not None and ndim != spec.ndim:
        raise ValueError(f"{prefix}expected ndim={spec.ndim}, found ndim={ndim}. "
                         f"Full shape received: {shape}")
    if spec.max_ndim is not None and ndim > spec.max_ndim:
        raise ValueError(f"{prefix}expected max_ndim={spec.max_ndim}, found ndim={ndim}")
    if spec.min_ndim is not None and ndim < spec.min_ndim:
        raise ValueError(f"{prefix}expected min_ndim={spec.min_ndim}, found ndim={ndim}. "
                         f"Full shape received: {shape}")
    for axis, value in spec.axes.items():
        got = dims[axis] if -ndim <= axis < ndim else None
        if value is not None and got not in (value, None):
            raise ValueError(f"{prefix}expected axis {axis} of input shape to have value "
                             f"{value}, but received input with shape {shape}")
