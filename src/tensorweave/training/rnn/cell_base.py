"""`tf.nn.rnn_cell.RNNCell` and `LayerRNNCell`: TF1's RNN cell base classes (rnn_cell_impl).

A cell is a `tf.layers.Layer` called as `cell(inputs, state)` → `(output, new_state)`, with
`state_size`, `output_size` and `zero_state(batch_size, dtype)`. Naming follows TF1 exactly:

- a `LayerRNNCell` (BasicLSTMCell, GRUCell, ...) opens its own variable scope named after its
  class on first call (`rnn/basic_lstm_cell/kernel`), its ops in the name scope current at
  that call (`rnn/while/basic_lstm_cell/MatMul`);
- a plain `RNNCell` (MultiRNNCell, wrappers, user cells calling `get_variable`) first
  re-enters the variable scope current at its first call, with a custom getter that records
  the variables it creates in the cell's weights (so `rnn/multi_rnn_cell/cell_0/...`).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, get_collection_ref
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.ops import array_ops, joining_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_util import flatten, map_structure
from tensorweave.ops.creation_ops import zeros
from tensorweave.ops.shape_inference import constant_value
from tensorweave.shapes import TensorShape, as_shape
from tensorweave.training.layers.base import Layer

ASSERT_LIKE_RNNCELL_ERROR_REGEXP = "is not an RNNCell"


def _has(obj, attr: str) -> bool:
    try:
        getattr(obj, attr)
    except (AttributeError, NotImplementedError):
        return False
    return True


def assert_like_rnncell(cell_name: str, cell) -> None:
    """Raises TypeError unless `cell` has output_size, state_size, zero_state (or
    get_initial_state) and is callable; the message lists what is missing."""
    conditions = [_has(cell, "output_size"), _has(cell, "state_size"),
                  _has(cell, "get_initial_state") or _has(cell, "zero_state"), callable(cell)]
    problems = ["'output_size' property is missing", "'state_size' property is missing",
                "either 'zero_state' or 'get_initial_state' method is required",
                "is not callable"]
    if not all(conditions):
        missing = [p for p, ok in zip(problems, conditions) if not ok]
        raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: "
                        f"{', '.join(missing)}.")


def check_supported_dtypes(dtype) -> None:
    """Raises ValueError for a non-floating, non-complex dtype (None passes)."""
    if dtype is None:
        return
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_complex):
        raise ValueError(f"RNN cell only supports floating point inputs, but saw dtype: "
                         f"{dtype.name}")


def check_rnn_cell_input_dtypes(values) -> None:
    for t in flatten(values):
        check_supported_dtypes(t.dtype)


def concat_shape(prefix, suffix, static: bool = False):
    """TF's rnn_cell_impl `_concat`: `prefix + suffix` (each an int, TensorShape or int
    Tensor) as an int32 Tensor, or with `static` as a list of ints/None (None: unknown rank).

    Raises:
      ValueError: a Tensor prefix/suffix of rank > 1, or an unknown part when not static.
    """
    p, p_static = _shape_part(prefix, "prefix")
    s, s_static = _shape_part(suffix, "suffix")
    if static:
        shape = TensorShape(p_static).concatenate(TensorShape(s_static))
        return shape.as_list() if shape.ndims is not None else None
    if p is None or s is None:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    return joining_ops.concat((p, s), 0)


def _shape_part(value, what: str):
    """(1-D int32 tensor or None, static dims or None) for one side of `concat_shape`."""
    if isinstance(value, Tensor):
        static = constant_value(value)
        static = None if static is None else [int(v) for v in static.reshape(-1)]
        if value.shape.ndims == 0:
            return array_ops.expand_dims(value, 0), static
        if value.shape.ndims != 1:
            raise ValueError(f"{what} tensor must be either a scalar or vector, but saw "
                             f"tensor: {value}")
        return value, static
    shape = as_shape(value)
    static = shape.as_list() if shape.ndims is not None else None
    t = constant(shape.as_list(), dtype=dtypes.int32) if shape.is_fully_defined() else None
    return t, static


def zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of shape `[batch_size] + s` for each `s` in the (nested) `state_size`."""
    def zeros_for(s):
        t = zeros(concat_shape(batch_size, s), dtype=dtype)
        static = concat_shape(batch_size, s, static=True)
        t.set_shape(TensorShape(static))
        return t

    return map_structure(zeros_for, state_size)


class RNNCell(Layer):
    """Abstract RNN cell: subclasses define `state_size`, `output_size` and
    `call(inputs, state)` → `(output, new_state)`.

    `cell(inputs, state, scope=None)` runs one step: `inputs` is `[batch, depth]`, `state`
    a `[batch, state_size]` tensor or a structure matching `state_size`.
    """

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._is_tf_rnn_cell = True

    def __call__(self, inputs, state, scope=None):
        """Runs the cell in `scope` (a name or VariableScope) or, by default, in the variable
        scope current at the first call."""
        if scope is not None:
            with vs.variable_scope(scope, custom_getter=self._rnn_get_variable) as scope:
                return super().__call__(inputs, state, scope=scope)
        cached = getattr(self, "rnncell_scope", None)
        if cached is None:
            cached = vs.variable_scope(vs.get_variable_scope(),
                                       custom_getter=self._rnn_get_variable)
            self.rnncell_scope = cached
        with cached:
            return super().__call__(inputs, state)

    def _rnn_get_variable(self, getter, *args, **kwargs):
        """Custom getter recording each variable a `call` gets in the cell's weights."""
        variable = getter(*args, **kwargs)
        trainable = any(v is variable
                        for v in get_collection_ref(GraphKeys.TRAINABLE_VARIABLES))
        tracked = self._trainable_weights if trainable else self._non_trainable_weights
        if all(variable is not v for v in tracked):
            tracked.append(variable)
        return variable

    @property
    def state_size(self):
        """Size(s) of the state: an int, a TensorShape, or a (nested) tuple of them."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        """Size of the output: an int or TensorShape."""
        raise NotImplementedError("Abstract method")

    def build(self, _):
        self.built = True

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """The zero state, with batch size and dtype from `inputs` when given.

        Raises:
          ValueError: batch_size/dtype disagree with `inputs`, or neither is known.
        """
        if inputs is not None:
            from tensorweave.framework.tensor_conversion import convert_to_tensor

            inputs = convert_to_tensor(inputs, name="inputs")
            static_batch = inputs.shape.as_tuple()[0]
            if batch_size is not None:
                given = constant_value(batch_size) if isinstance(batch_size, Tensor) \
                    else batch_size
                if static_batch != given:
                    raise ValueError(f"batch size from input tensor is different from the "
                                     f"input param. Input tensor batch: {static_batch}, "
                                     f"batch_size: {batch_size}")
            if dtype is not None and inputs.dtype != dtypes.as_dtype(dtype):
                raise ValueError(f"dtype from input tensor is different from the input "
                                 f"param. Input tensor dtype: {inputs.dtype.name}, dtype: "
                                 f"{dtypes.as_dtype(dtype).name}")
            batch_size = static_batch or array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(f"batch_size and dtype cannot be None while constructing "
                             f"initial state: batch_size={batch_size}, dtype={dtype}")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state: `[batch_size, s]` for each `s` in `state_size`, in the name
        scope `<ClassName>ZeroState`."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """An RNNCell that behaves exactly like a `tf.layers.Layer`: weights are made in
    `build`, the variable scope is the layer's own (`basic_lstm_cell`, `gru_cell_1`, ...)."""

    def __call__(self, inputs, state, scope=None, *args, **kwargs):
        return Layer.__call__(self, inputs, state, *args, scope=scope, **kwargs)


def input_depth(inputs_shape) -> int:
    """The last dim of a build input shape.

    Raises:
      ValueError: it is unknown (as TF's cells raise).
    """
    shape = TensorShape(inputs_shape)
    depth = None if shape.ndims is None else shape.as_list()[-1]
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    return depth


__all__ = ["RNNCell", "LayerRNNCell", "assert_like_rnncell", "zero_state_tensors",
           "concat_shape", "check_supported_dtypes", "ASSERT_LIKE_RNNCELL_ERROR_REGEXP"]
