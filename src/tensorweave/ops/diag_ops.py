"""Diagonal and band array ops: Diag, DiagPart, MatrixDiag, MatrixDiagPart, MatrixBandPart."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.joining_ops import merge_dims
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

_DIAG_TYPES = "{bfloat16, half, float, double, int32, int64, complex64, complex128}"


def _at_least(ctx, dims, rank):
    if dims is not None and len(dims) < rank:
        raise ctx.fail(f"Shape must be at least rank {rank} but is rank {len(dims)}")
    return dims


def _diag_shape(ctx):
    dims = _at_least(ctx, ctx.input_dims(0), 1)
    return TensorShape(None if dims is None else dims + dims)


def _diag_part_shape(ctx):
    dims = ctx.input_dims(0)
    if dims is None:
        return TensorShape(None)
    if len(dims) % 2 or not dims:
        raise ctx.fail(f"Input must have even and non-zero rank, input rank is {len(dims)}")
    mid = len(dims) // 2
    return TensorShape(merge_dims(ctx, dims[:mid], dims[mid:]))


def _matrix_diag_shape(ctx):
    dims = _at_least(ctx, ctx.input_dims(0), 1)
    return TensorShape(None if dims is None else dims + dims[-1:])


def _matrix_diag_part_shape(ctx):
    dims = _at_least(ctx, ctx.input_dims(0), 2)
    if dims is None:
        return TensorShape(None)
    m, n = dims[-2:]
    small = None if m is None or n is None else min(m, n)
    return TensorShape(dims[:-2] + (small,))


register_op("Diag", inputs=["diagonal: T"], outputs=["output: T"], attrs=[f"T: {_DIAG_TYPES}"],
            shape_fn=_diag_shape)
register_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"],
            attrs=[f"T: {_DIAG_TYPES}"], shape_fn=_diag_part_shape)
register_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"], attrs=["T: type"],
            shape_fn=_matrix_diag_shape)
register_op("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=["T: type"],
            shape_fn=_matrix_diag_part_shape)
register_op("MatrixBandPart", inputs=["input: T", "num_lower: Tindex", "num_upper: Tindex"],
            outputs=["band: T"], attrs=["T: type", "Tindex: {int32, int64} = DT_INT64"],
            shape_fn=unchanged)


def diag(diagonal, name=None):
    """A tensor with `diagonal` on its diagonal: output[i.., i..] = diagonal[i..]."""
    return apply_op("Diag", diagonal, name=name)


def diag_part(input, name=None):  # noqa: A002 - TF's argument name
    """The diagonal of a rank-2k tensor (inverse of `diag`)."""
    return apply_op("DiagPart", input, name=name)


def matrix_diag(diagonal, name=None):
    """Batched diagonal matrices from the last dimension of `diagonal`."""
    return apply_op("MatrixDiag", diagonal, name=name)


def matrix_diag_part(input, name=None):  # noqa: A002
    """The main diagonal of each innermost matrix."""
    return apply_op("MatrixDiagPart", input, name=name)


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps a band of each innermost matrix: `num_lower` subdiagonals and `num_upper`
    superdiagonals (negative: keep the whole triangle)."""
    num_lower, num_upper = (_index(v) for v in (num_lower, num_upper))
    return apply_op("MatrixBandPart", input, num_lower, num_upper, name=name)


def _index(value):
    """Python ints become int64, the type TF's op_def_library picks from Tindex's default."""
    if isinstance(value, Tensor) or hasattr(value, "op"):
        return value
    return convert_to_tensor(value, dtype=dtypes.int64)


__all__ = ["diag", "diag_part", "matrix_diag", "matrix_diag_part", "matrix_band_part"]
