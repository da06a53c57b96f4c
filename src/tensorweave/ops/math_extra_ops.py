"""More math: the Einsum and Roll ops, and the composites `eye`, `norm`, `sort`, `argsort`,
`batch_gather` (TF's special_math_ops.py, linalg_ops.py, sort_ops.py, array_ops.py).

    Einsum(inputs; equation)       numpy's einsum of 1 or 2 operands ("ij,jk->ik", "...")
    Roll(input, shift, axis)       elements shifted along axes, wrapping around

Kernels: `runtime/kernels/cpu/math_extra.py`; gradients: `autodiff/math_extra_grad.py`.
"""

from __future__ import annotations

import re

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape


# -- Einsum ------------------------------------------------------------------------------------
def parse_equation(equation: str, n: int) -> tuple[list[str], str]:
    """(input subscripts, output subscripts) with implicit output filled in as numpy does.

    Raises:
      ValueError: a malformed equation or the wrong number of inputs.
    """
    if isinstance(equation, bytes):
        equation = equation.decode()
    eq = equation.replace(" ", "")
    if not re.fullmatch(r"[a-zA-Z.,]*(->[a-zA-Z.]*)?", eq):
        raise ValueError(f"Invalid einsum equation: {equation}")
    lhs, _, rhs = eq.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != n:
        raise ValueError(f"Expecting {len(inputs)} inputs for equation {equation}, got {n}")
    if "->" not in eq:
        letters = [c for c in lhs if c.isalpha()]
        rhs = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs, rhs


def _einsum_shape(ctx):
    n = ctx.attr("N")
    try:
        inputs, out = parse_equation(ctx.attr("equation"), n)
    except ValueError as e:
        raise ctx.fail(str(e)) from None
    dims: dict[str, int | None] = {}
    ellipsis = None
    for i, subs in enumerate(inputs):
        shape = ctx.input_dims(i)
        if shape is None:
            return TensorShape(None)
        letters = subs.replace("...", "")
        extra = len(shape) - len(letters)
        if extra < 0 or (extra and "..." not in subs):
            raise ctx.fail(f"Input {i} has rank {len(shape)} but subscripts '{subs}'")
        head = subs.index("...") if "..." in subs else len(subs)
        if "..." in subs:
            ell = shape[head:head + extra]
            ellipsis = ell if ellipsis is None or len(ell) > len(ellipsis) else ellipsis
        for j, c in enumerate(letters):
            d = shape[j if j < head else j + extra]
            if dims.get(c) not in (None, 1) and d not in (None, 1) and dims[c] != d:
                raise ctx.fail(f"Expected dimension {dims[c]} at axis {j} of input {i}, "
                               f"got {d}")
            dims[c] = d if dims.get(c) in (None, 1) else dims[c]
    out_dims: list = []
    for part in re.split(r"(\.\.\.)", out):
        out_dims += list(ellipsis or ()) if part == "..." else [dims.get(c) for c in part]
    return TensorShape(out_dims)


register_op("Einsum", inputs=["inputs: N * T"], outputs=["output: T"],
            attrs=["equation: string", "N: int >= 1", "T: type"], shape_fn=_einsum_shape)
register_op("Roll", inputs=["input: T", "shift: Tshift", "axis: Taxis"], outputs=["output: T"],
            attrs=["T: type", "Tshift: {int32, int64}", "Taxis: {int32, int64}"],
            shape_fn=unchanged)


def einsum(equation, *inputs, **kwargs):
    """`tf.einsum`: numpy's einsum over one or two tensors (Einsum)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"invalid keyword arguments for einsum: {', '.join(kwargs)}")
    tensors = [convert_to_tensor(x) for x in inputs]
    parse_equation(equation, len(tensors))
    return apply_op("Einsum", tensors, equation=equation, name=name)


def roll(input, shift, axis, name=None):  # noqa: A002 - TF's name
    """Shifts elements along `axis` by `shift` (both scalars or equal-length vectors)."""
    return apply_op("Roll", input, shift, axis, name=name)


# -- composites --------------------------------------------------------------------------------
def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """An identity matrix [batch_shape..., num_rows, num_columns] (ones on the diagonal)."""
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        cols = num_rows if num_columns is None else num_columns
        batch = list(batch_shape or [])
        if isinstance(num_rows, int) and isinstance(cols, int):
            value = np.broadcast_to(np.eye(num_rows, cols, dtype=dtypes.as_dtype(
                dtype).np_dtype), batch + [num_rows, cols])
            return convert_to_tensor(np.array(value), dtype=dtype)
        n = apply_op("Minimum", num_rows, cols)
        ones = apply_op("Fill", apply_op("ConcatV2", [convert_to_tensor(batch, dtype=dtypes.int32),
                                                      apply_op("ExpandDims", n, 0)], 0),
                        convert_to_tensor(1, dtype=dtype))
        diag = apply_op("MatrixDiag", ones)
        pads = apply_op("Pack", [apply_op("Pack", [0, num_rows - n]),
                                 apply_op("Pack", [0, cols - n])])
        head = apply_op("Fill", [len(batch), 2], 0)
        return apply_op("Pad", diag, apply_op("ConcatV2", [head, pads], 0))


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """Vector norms (ord 1, 2/'euclidean', inf, p > 0) over `axis` (None: all entries) and
    matrix norms ('fro', 'euclidean', 1, inf) over a pair of axes (TF's tf.norm).

    Raises:
      ValueError: an unsupported `ord` or `axis`.
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis}")
    supported = ("fro", "euclidean", 1, np.inf) if matrix else ("euclidean", 1, 2, np.inf)
    if ord not in supported and not (not matrix and isinstance(ord, (int, float)) and ord > 0):
        raise ValueError(f"'ord' must be a supported {'matrix' if matrix else 'vector'} norm, "
                         f"got {ord}")
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        axes = (list(axis) if isinstance(axis, (list, tuple)) else [axis]) if axis is not None \
            else None
        if axes is None:
            x = apply_op("Reshape", x, [-1])
            axes = [0]
        a = apply_op("Abs", x)
        if matrix and ord in (1, np.inf):
            inner, outer = (axes[0], axes[1]) if ord == 1 else (axes[1], axes[0])
            sums = apply_op("Sum", a, [inner], keep_dims=True)
            out = apply_op("Max", sums, [outer], keep_dims=True)
            return out if keep else apply_op("Squeeze", out, squeeze_dims=sorted(axes))
        if ord in ("euclidean", "fro", 2):
            out = apply_op("Sqrt", apply_op("Sum", apply_op("Mul", x, x), axes, keep_dims=keep))
        elif ord == 1:
            out = apply_op("Sum", a, axes, keep_dims=keep)
        elif ord == np.inf:
            out = apply_op("Max", a, axes, keep_dims=keep)
        else:
            p = convert_to_tensor(float(ord), dtype=x.dtype.base_dtype)
            out = apply_op("Pow", apply_op("Sum", apply_op("Pow", a, p), axes, keep_dims=keep),
                           apply_op("Reciprocal", p))
        return out


def _sort_indices(values, axis, direction, name):
    """TF's sort_ops: top_k over the last axis (negated for ASCENDING), the axis moved last."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f'"direction" should be one of ASCENDING, DESCENDING (got '
                         f'{direction})')
    x = convert_to_tensor(values, name="values")
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("sort needs a tensor of known rank")
    axis = axis % rank if rank else 0
    perm = [i for i in range(rank) if i != axis] + [axis]
    moved = x if axis == rank - 1 else apply_op("Transpose", x, perm)
    if direction == "ASCENDING":
        moved = apply_op("Neg", moved) if x.dtype.is_floating or x.dtype.is_integer else moved
    k = apply_op("StridedSlice", apply_op("Shape", moved), [-1], [0], [1], end_mask=1,
                 shrink_axis_mask=1)
    top, idx = apply_op("TopKV2", moved, k, sorted=True)
    if direction == "ASCENDING":
        top = apply_op("Neg", top)
    inverse = list(np.argsort(perm))
    back = (lambda t: t) if axis == rank - 1 else (lambda t: apply_op("Transpose", t, inverse))
    return back(top), back(idx)


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`values` sorted along `axis` (TopKV2, as TF)."""
    with name_scope(name, "sort", [values]):
        return _sort_indices(values, axis, direction, name)[0]


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis` (TopKV2, as TF: ties keep order)."""
    del stable
    with name_scope(name, "argsort", [values]):
        return _sort_indices(values, axis, direction, name)[1]


def batch_gather(params, indices, name=None):
    """`gather(params, indices, batch_dims=rank(indices) - 1)` (TF1 `tf.batch_gather`)."""
    with name_scope(name, "batch_gather", [params, indices]):
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        axis = rank - 1
        return apply_op("GatherV2", params, indices, axis, batch_dims=rank - 1)


__all__ = ["einsum", "roll", "eye", "norm", "sort", "argsort", "batch_gather"]


# -- bitwise -----------------------------------------------------------------------------------
def _broadcast_shape(ctx):
    from tensorweave.shapes import broadcast_shapes

    try:
        return broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1))
    except ValueError:
        raise ctx.fail(f"Dimensions must be equal, but are {ctx.input_shape(0)} and "
                       f"{ctx.input_shape(1)}") from None


_INTS = "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64}"
for _name in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    register_op(_name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_INTS],
                shape_fn=_broadcast_shape, is_commutative=True)
for _name in ("LeftShift", "RightShift"):
    register_op(_name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[_INTS],
                shape_fn=_broadcast_shape)
register_op("Invert", inputs=["x: T"], outputs=["y: T"], attrs=[_INTS], shape_fn=unchanged)
register_op("PopulationCount", inputs=["x: T"], outputs=["y: uint8"], attrs=[_INTS],
            shape_fn=unchanged)


def _bitwise(op_type, doc):
    def fn(x, y, name=None):
        return apply_op(op_type, x, y, name=name)

    fn.__doc__ = doc
    return fn


bitwise_and = _bitwise("BitwiseAnd", "Element-wise x & y.")
bitwise_or = _bitwise("BitwiseOr", "Element-wise x | y.")
bitwise_xor = _bitwise("BitwiseXor", "Element-wise x ^ y.")
left_shift = _bitwise("LeftShift", "Element-wise x << y.")
right_shift = _bitwise("RightShift", "Element-wise x >> y (arithmetic for signed types).")


def invert(x, name=None):
    """Element-wise ~x."""
    return apply_op("Invert", x, name=name)


def population_count(x, name=None):
    """The number of set bits of each element (uint8)."""
    return apply_op("PopulationCount", x, name=name)


# -- EditDistance ------------------------------------------------------------------------------
def _edit_distance_shape(ctx):
    hyp, truth = ctx.constant_value(2), ctx.constant_value(5)
    if hyp is None or truth is None:
        rank = ctx.input_dims(2)
        return TensorShape(None if rank is None or rank[0] is None else [None] * (rank[0] - 1))
    if len(hyp) != len(truth):
        raise ctx.fail(f"Inputs must have the same rank, got {len(hyp)} and {len(truth)}")
    return TensorShape([max(int(a), int(b)) for a, b in zip(hyp[:-1], truth[:-1])])


register_op("EditDistance",
            inputs=["hypothesis_indices: int64", "hypothesis_values: T",
                    "hypothesis_shape: int64", "truth_indices: int64", "truth_values: T",
                    "truth_shape: int64"],
            outputs=["output: float"], attrs=["normalize: bool = true", "T: type"],
            shape_fn=_edit_distance_shape)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Levenshtein distances between the sequences (last dimension) of two SparseTensors,
    divided by the truth's length when `normalize` (EditDistance).

    Raises:
      TypeError: an input is not a SparseTensor.
    """
    from tensorweave.ops.sparse_tensor import SparseTensor

    for what, sp in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"{what} must be a SparseTensor.")
    return apply_op("EditDistance", hypothesis.indices, hypothesis.values,
                    hypothesis.dense_shape, truth.indices, truth.values, truth.dense_shape,
                    normalize=normalize, name=name)


__all__ += ["edit_distance"]
