"""Math ops: elementwise unary and binary ops, and the Tensor operators built on them."""

from __future__ import annotations

from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import broadcast_binary, unchanged
from tensorweave.ops.registry import register_op

_FLOAT_COMPLEX = "{half, bfloat16, float, double, complex64, complex128}"
_NUMBER = "{half, bfloat16, float, double, uint8, int8, uint16, int16, int32, int64, " \
          "complex64, complex128}"


def _unary(name: str, types: str = _FLOAT_COMPLEX) -> None:
    register_op(name, inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {types}"],
                shape_fn=unchanged)


def _binary(name: str, types: str = _NUMBER, commutative: bool = False) -> None:
    register_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[f"T: {types}"],
                shape_fn=broadcast_binary, is_commutative=commutative)


_unary("Sin")
_binary("AddV2", commutative=True)


def sin(x, name=None):
    return apply_op("Sin", x, name=name)


def add(x, y, name=None):
    return apply_op("AddV2", x, y, name=name)


# -- operators --------------------------------------------------------------------------------
def _binary_operator(op_name: str, fn) -> None:
    def forward(self, other):
        return fn(self, convert_to_tensor(other, dtype=self.dtype.base_dtype))

    def reverse(self, other):
        return fn(convert_to_tensor(other, dtype=self.dtype.base_dtype), self)

    Tensor._override_operator(f"__{op_name}__", forward)
    Tensor._override_operator(f"__r{op_name}__", reverse)


_binary_operator("add", add)
