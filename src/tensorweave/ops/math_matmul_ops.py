"""Math ops on whole tensors: MatMul and BatchMatMul, AddN, ClipByValue, LinSpace, and the
wrappers built on them (matmul, add_n, accumulate_n, clip_by_value, tensordot, trace, ...)."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.common_shapes import merge_all_inputs, unchanged
from tensorweave.ops.math_ops import _binary_operator, _op, conj, op_scope
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape, as_shape, broadcast_shapes

_MATMUL_TYPES = ("{bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, "
                 "uint32, uint64, complex64, complex128}")
# NOTE: grad_a/grad_b (grad_x/grad_y) are TF 2.x's optimization hints; GraphDefs TF writes
# today carry them, so they are declared (with TF's false default) for import to accept them.


# -- shape functions --------------------------------------------------------------------------
def _with_rank(ctx, i: int, rank: int):
    dims = ctx.input_dims(i)
    if dims is None:
        return (None,) * rank
    if len(dims) != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {len(dims)}")
    return dims


def _merge_dim(ctx, a, b):
    if a is not None and b is not None and a != b:
        raise ctx.fail(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _matmul_shape(ctx) -> TensorShape:
    """[m, k] x [k, n] -> [m, n], after the transpose attrs (TF's MatMulShape)."""
    a, b = _with_rank(ctx, 0, 2), _with_rank(ctx, 1, 2)
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    _merge_dim(ctx, a[0] if ta else a[1], b[1] if tb else b[0])
    return TensorShape([a[1] if ta else a[0], b[0] if tb else b[1]])


def _batch_matmul_shape(ctx, broadcast: bool):
    a, b = ctx.input_dims(0), ctx.input_dims(1)
    for dims in (a, b):
        if dims is not None and len(dims) < 2:
            raise ctx.fail(f"Shape must be at least rank 2 but is rank {len(dims)}")
    if a is None or b is None:
        return TensorShape(None)
    adj_x, adj_y = ctx.attr("adj_x"), ctx.attr("adj_y")
    _merge_dim(ctx, a[-2] if adj_x else a[-1], b[-1] if adj_y else b[-2])
    batch = _batch_dims(ctx, a[:-2], b[:-2], broadcast)
    return batch.concatenate([a[-1] if adj_x else a[-2], b[-2] if adj_y else b[-1]])


def _batch_dims(ctx, a, b, broadcast: bool) -> TensorShape:
    if not broadcast:
        if len(a) != len(b):
            raise ctx.fail(f"Shapes must be equal rank, but are {len(a)} and {len(b)}")
        return TensorShape([_merge_dim(ctx, p, q) for p, q in zip(a, b)])
    try:
        return broadcast_shapes(TensorShape(list(a)), TensorShape(list(b)))
    except ValueError:
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        p, q = next((p, q) for p, q in zip(a, b) if p not in (1, None) and q not in (1, None)
                    and p != q)
        raise ctx.fail(f"Dimensions must be equal, but are {p} and {q}") from None


def _accumulate_shape(ctx) -> TensorShape:
    shape = merge_all_inputs(ctx)
    try:
        return shape.merge_with(ctx.attr("shape"))
    except ValueError:
        raise ctx.fail(f"Shapes must be equal, but are {shape} and {ctx.attr('shape')}") \
            from None


def _linspace_shape(ctx) -> TensorShape:
    for i in (0, 1, 2):
        if ctx.input_shape(i).ndims not in (None, 0):
            raise ctx.fail(f"Shape must be rank 0 but is rank {ctx.input_shape(i).ndims}")
    num = ctx.constant_value(2)
    if num is not None and int(num) <= 0:
        raise ctx.fail(f"Requires num > 0: {int(num)}")
    return TensorShape([None if num is None else int(num)])


# -- registration -----------------------------------------------------------------------------
register_op("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
            attrs=["transpose_a: bool = false", "transpose_b: bool = false",
                   f"T: {_MATMUL_TYPES}", "grad_a: bool = false", "grad_b: bool = false"],
            shape_fn=_matmul_shape)
register_op("BatchMatMul", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs=[f"T: {_MATMUL_TYPES}", "adj_x: bool = false", "adj_y: bool = false",
                   "grad_x: bool = false", "grad_y: bool = false"],
            shape_fn=lambda ctx: _batch_matmul_shape(ctx, broadcast=False))
register_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
            attrs=[f"T: {_MATMUL_TYPES}", "adj_x: bool = false", "adj_y: bool = false",
                   "grad_x: bool = false", "grad_y: bool = false"],
            shape_fn=lambda ctx: _batch_matmul_shape(ctx, broadcast=True))
register_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
            attrs=["N: int >= 1", "T: {numbertype, variant}"], shape_fn=merge_all_inputs,
            is_commutative=True)
register_op("AccumulateNV2", inputs=["inputs: N * T"], outputs=["sum: T"],
            attrs=["N: int >= 1", "T: numbertype", "shape: shape"],
            shape_fn=_accumulate_shape, is_commutative=True)
register_op("ClipByValue", inputs=["t: T", "clip_value_min: T", "clip_value_max: T"],
            outputs=["output: T"], attrs=["T: numbertype"], shape_fn=unchanged)
register_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
            attrs=["T: {bfloat16, half, float, double}", "Tidx: {int32, int64} = DT_INT32"],
            shape_fn=_linspace_shape)


# -- wrappers ---------------------------------------------------------------------------------
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """a @ b on the two innermost dims: a MatMul op named "MatMul" for matrices, a
    BatchMatMulV2 (broadcasting batch dims) when either input has rank > 2 or unknown rank.

    Raises:
      ValueError: both transpose_x and adjoint_x are set, or the inner dims differ.
    """
    with op_scope(name, "MatMul", [a, b]) as name:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of transpose_a and adjoint_a can be True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of transpose_b and adjoint_b can be True.")
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_rank, b_rank = a.shape.ndims, b.shape.ndims
        if a_rank is None or a_rank > 2 or b_rank is None or b_rank > 2:
            if transpose_a:
                a, adjoint_a = conj(a), True
            if transpose_b:
                b, adjoint_b = conj(b), True
            return _op("BatchMatMulV2", a, b, adj_x=adjoint_a, adj_y=adjoint_b, name=name)
        if adjoint_a:
            a, transpose_a = conj(a), True
        if adjoint_b:
            b, transpose_b = conj(b), True
        return _op("MatMul", a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)


def add_n(inputs, name=None):
    """Sums a list of same-shape, same-dtype tensors (an AddN op; one input is returned as is,
    or through an Identity named `name`).

    Raises:
      ValueError: `inputs` is empty or not a list.
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    inputs = [convert_to_tensor(x) for x in inputs]
    if len(inputs) == 1:
        return _op("Identity", inputs[0], name=name) if name else inputs[0]
    return _op("AddN", inputs, name=name)


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """Like add_n, as an AccumulateNV2 op carrying the (merged) static `shape`.

    Raises:
      ValueError: inputs empty, of different dtypes, or of incompatible shapes.
      TypeError: `tensor_dtype` differs from the inputs' dtype.
    """
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    inputs = [convert_to_tensor(x) for x in inputs]
    if not all(x.dtype == inputs[0].dtype for x in inputs):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype "
                         "and shape")
    merged = as_shape(shape) if shape is not None else TensorShape(None)
    for x in inputs:
        merged = merged.merge_with(x.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != inputs[0].dtype:
        raise TypeError(f"tensor_dtype is {tensor_dtype}, but input is of type "
                        f"{inputs[0].dtype}")
    if len(inputs) == 1:
        return _op("Identity", inputs[0], name=name) if name else inputs[0]
    return _op("AccumulateNV2", inputs, shape=merged, name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """TF1's clip: Minimum(t, max) then Maximum(., min), the latter named "clip_by_value".

    Raises:
      ValueError: the clip values would broadcast `t` to a bigger shape.
    """
    with op_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as name:
        values = convert_to_tensor(t, name="t")
        t_min = _op("Minimum", values, clip_value_max)
        values.shape.merge_with(t_min.shape)
        t_max = _op("Maximum", t_min, clip_value_min, name=name)
        values.shape.merge_with(t_max.shape)
        return t_max


def scalar_mul(scalar, x, name=None):
    """scalar * x, where `scalar` must be a 0-D tensor.

    Raises:
      ValueError: `scalar` is not 0-D.
    """
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"Only scalar multiply works, got shape {scalar.shape}")
    with op_scope(name, "scalar_mul", [scalar, x]) as name:
        return _op("Mul", scalar, x, name=name)


def linspace(start, stop, num, name=None):
    """`num` evenly spaced values from `start` to `stop` inclusive (a LinSpace op)."""
    return _op("LinSpace", start, stop, num, name=name)


lin_space = linspace


def trace(x, name=None):
    """Sum of the main diagonal of each innermost matrix: Sum(MatrixDiagPart(x), [-1])."""
    from tensorweave.ops.reduction_ops import reduce_sum

    with op_scope(name, "Trace", [x]) as name:
        x = convert_to_tensor(x, name="x")
        return reduce_sum(_op("MatrixDiagPart", x), [-1], name=name)


# -- tensordot --------------------------------------------------------------------------------
def _tensordot_axes(a: Tensor, axes):
    if isinstance(axes, (int, np.integer)):
        if axes < 0:
            raise ValueError("'axes' must be at least 0.")
        rank = a.shape.ndims
        if rank is None:
            raise ValueError("tensordot with an integer 'axes' needs a tensor of known rank")
        if axes > rank:
            raise ValueError(f"'axes' must not be larger than the number of dimensions of "
                             f"tensor {a}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, (list, tuple)) and len(axes) == 2:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', "
                             f"{len(a_axes)} != {len(b_axes)}.")
        return a_axes, b_axes
    raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}.")


def _tensordot_reshape(a: Tensor, axes: list, flipped: bool = False):
    """Transposes and reshapes `a` into a matrix; returns it and its free dims (static list,
    or a tensor with the static list alongside)."""
    dims = a.shape.as_tuple()
    if dims is None:
        raise ValueError("tensordot needs tensors of known rank")
    axes = [i if i >= 0 else i + len(dims) for i in axes]
    free = [i for i in range(len(dims)) if i not in axes]
    free_dims = [dims[i] for i in free]
    perm = axes + free if flipped else free + axes
    transposed = _op("Transpose", a, np.array(perm, np.int32), name="transpose")
    if a.shape.is_fully_defined():
        prod_free = int(np.prod(free_dims))
        prod_axes = int(np.prod([dims[i] for i in axes]))
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        return _op("Reshape", transposed, np.array(new_shape, np.int32)), free_dims, free_dims
    from tensorweave.ops.reduction_ops import reduce_prod

    shape_a = _op("Shape", a)
    free_t = _op("GatherV2", shape_a, np.array(free, np.int32), np.int32(0))
    axes_t = _op("GatherV2", shape_a, np.array(axes, np.int32), np.int32(0))
    parts = [reduce_prod(axes_t), reduce_prod(free_t)]
    new_shape = _op("Pack", parts[::1] if flipped else parts[::-1], axis=0)
    return _op("Reshape", transposed, new_shape), free_t, free_dims


def tensordot(a, b, axes, name=None):
    """Sums the products of `a` and `b` over `axes` (an int N: the last N axes of `a` with the
    first N of `b`; or a pair of axis lists), through Transpose/Reshape/MatMul as TF does.

    Raises:
      ValueError: bad `axes`, or inputs of unknown rank.
    """
    with op_scope(name, "Tensordot", [a, b]) as name:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_mat, a_free, a_static = _tensordot_reshape(a, a_axes)
        b_mat, b_free, b_static = _tensordot_reshape(b, b_axes, True)
        product = matmul(a_mat, b_mat)
        if isinstance(a_free, list) and isinstance(b_free, list):
            return _op("Reshape", product, np.array(a_free + b_free, np.int32), name=name)
        shape = _op("ConcatV2", [_as_shape_tensor(a_free), _as_shape_tensor(b_free)],
                    np.int32(0))
        out = _op("Reshape", product, shape, name=name)
        out.set_shape(a_static + b_static)
        return out


def _as_shape_tensor(dims):
    if isinstance(dims, list):
        return convert_to_tensor(np.array(dims, np.int32))
    return dims


_binary_operator("matmul", matmul)

__all__ = ["accumulate_n", "add_n", "clip_by_value", "lin_space", "linspace", "matmul",
           "scalar_mul", "tensordot", "trace"]
