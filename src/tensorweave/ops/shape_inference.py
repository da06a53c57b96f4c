"""The context a shape function sees, and static constant evaluation of small tensors.

A shape function gets an `InferenceContext` and returns one `TensorShape` per output (a single
shape for single-output ops). It raises `ctx.fail(...)` (a ValueError) for shapes that cannot
work; `apply_op` adds the op's name, type and input shapes to the message.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensorweave.shapes import TensorShape


class ShapeError(ValueError):
    """Raised by shape functions; `apply_op` rewrites it into TF's message format."""


class InferenceContext:
    """What a shape function may look at: input shapes/dtypes, attrs, constant inputs."""

    __slots__ = ("name", "input_shapes", "input_dtypes", "attrs", "_inputs")

    def __init__(self, name, inputs, attrs):
        self.name = name
        self._inputs = inputs
        self.input_shapes = [t.shape for t in inputs]
        self.input_dtypes = [t.dtype for t in inputs]
        self.attrs = attrs

    def input_tensor(self, i: int):
        """Input `i` itself (to look through its producer, e.g. for partial shapes)."""
        return self._inputs[i]

    def input_shape(self, i: int) -> TensorShape:
        return self.input_shapes[i]

    def input_dims(self, i: int):
        """Input `i`'s dims as a tuple of ints/None, or None for unknown rank."""
        return self.input_shapes[i].as_tuple()

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    def attr(self, name: str):
        return self.attrs.get(name)

    def constant_value(self, i: int):
        """The value of input `i` when it is known before running (else None)."""
        return constant_value(self._inputs[i])

    def shape_from_tensor(self, i: int) -> TensorShape:
        """TF's MakeShapeFromShapeTensor: a partial shape from a 1-D shape input."""
        return shape_from_tensor(self._inputs[i])

    def fail(self, message: str) -> ShapeError:
        return ShapeError(message)


# -- static constant evaluation (tensor_util.constant_value) --------------------------------
ConstantEvaluator = Callable[["object"], "np.ndarray | None"]
_EVALUATORS: dict[str, ConstantEvaluator] = {}


def register_constant_evaluator(op_type: str):
    """Registers `fn(op) -> ndarray | None` computing op's output 0 statically."""

    def wrap(fn):
        if op_type in _EVALUATORS:
            raise ValueError(f"constant evaluator for {op_type} already registered")
        _EVALUATORS[op_type] = fn
        return fn

    return wrap


def constant_value(tensor):
    """The tensor's value when computable at graph-construction time, else None."""
    if tensor.value_index != 0:
        return None
    fn = _EVALUATORS.get(tensor.op.type)
    if fn is None:
        return None
    try:
        return fn(tensor.op)
    except (ValueError, TypeError, IndexError):
        return None


def shape_from_tensor(tensor) -> TensorShape:
    """A partial shape from a 1-D int tensor: known entries where they can be found (through
    constants, Shape, Pack, ConcatV2, slices of shapes, ...: `shape_tensors.partial_shape`)."""
    from tensorweave.ops.shape_tensors import partial_shape

    return partial_shape(tensor)
