"""Lowerings of array ops (Const, Identity, Reshape, Shape, ...) and the host-side ops a
partition runs around its compiled function (`_Arg`, `_Retval`, `_Send`, `_Recv`, `NoOp`).

Shape, Size and Rank give numpy values (shapes are static under jit), so whatever is computed
from them folds to a constant while the partition is traced.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.ops.slicing_ops import slice_index
from tensorweave.ops.strided_slice_spec import StridedSliceError, validate
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import (
    register_lowering,
    register_simple_lowering,
    share_cpu_kernel,
)

for _op in ("_Arg", "_Retval", "_Send", "_Recv", "_HostSend", "_HostRecv"):
    share_cpu_kernel(_op)


def _np(dt) -> np.dtype:
    return np.dtype(dtypes.as_dtype(dt).np_dtype)


@register_lowering("Const")
def _const(node):
    value = np.asarray(node.attr("value"))
    return lambda: value


register_lowering("NoOp")(lambda node: lambda *xs: None)
for _op in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
    register_simple_lowering(_op, lambda jnp, lax: lambda x: x)


@register_lowering("Shape")
def _shape(node):
    dt = _np(node.attr("out_type"))
    return lambda x: np.array(np.shape(x), dt)


@register_lowering("Size")
def _size(node):
    dt = _np(node.attr("out_type"))
    return lambda x: np.array(int(np.prod(np.shape(x))), dt)


@register_lowering("ShapeN")
def _shape_n(node):
    dt = _np(node.attr("out_type"))
    return lambda *xs: tuple(np.array(np.shape(x), dt) for x in xs)


register_lowering("Rank")(lambda node: lambda x: np.array(np.ndim(x), np.int32))


def _ints(v) -> tuple[int, ...]:
    return tuple(int(i) for i in np.ravel(v))


@register_lowering("Reshape", const_inputs=(1,))
def _reshape(node):
    _, jnp, _ = jax_modules()
    return lambda x, shape: jnp.reshape(x, _ints(shape))


@register_lowering("ExpandDims", const_inputs=(1,))
def _expand_dims(node):
    _, jnp, _ = jax_modules()
    return lambda x, axis: jnp.expand_dims(x, _ints(axis)[0])


@register_lowering("Squeeze")
def _squeeze(node):
    _, jnp, _ = jax_modules()
    dims = tuple(int(d) for d in node.attr("squeeze_dims") or ())

    def run(x):
        axes = dims or tuple(i for i, n in enumerate(x.shape) if n == 1)
        return jnp.squeeze(x, axis=axes)

    return run


@register_lowering("Transpose", const_inputs=(1,))
def _transpose(node):
    _, jnp, _ = jax_modules()
    return lambda x, perm: jnp.transpose(x, _ints(perm))


@register_lowering("Tile", const_inputs=(1,))
def _tile(node):
    _, jnp, _ = jax_modules()
    return lambda x, multiples: jnp.tile(x, _ints(multiples))


@register_lowering("Fill", const_inputs=(0,))
def _fill(node):
    _, jnp, _ = jax_modules()
    return lambda dims, value: jnp.full(_ints(dims), value)


register_simple_lowering("ZerosLike", lambda jnp, lax: jnp.zeros_like)
register_simple_lowering("OnesLike", lambda jnp, lax: jnp.ones_like)


@register_lowering("ConcatV2", const_inputs=(-1,))
def _concat(node):
    _, jnp, _ = jax_modules()

    def run(*xs):
        *values, axis = xs
        return jnp.concatenate(values, axis=int(np.asarray(axis)))

    return run


@register_lowering("Pack")
def _pack(node):
    _, jnp, _ = jax_modules()
    axis = int(node.attr("axis", 0))
    return lambda *xs: jnp.stack(xs, axis=axis)


@register_lowering("BroadcastTo", const_inputs=(1,))
def _broadcast_to(node):
    _, jnp, _ = jax_modules()
    return lambda x, shape: jnp.broadcast_to(x, _ints(shape))


# -- slicing, splitting, gathering -----------------------------------------------------------
_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def _dense_slice(node, dims, begin, end, strides):
    masks = {k: node.attr(k) for k in _MASKS}
    try:
        return validate(_ints(begin), _ints(end), _ints(strides), tuple(dims), **masks)
    except StridedSliceError as e:
        raise _invalid(str(e)) from None


@register_lowering("Slice", const_inputs=(1, 2))
def _slice(node):
    def run(x, begin, size):
        try:
            index = slice_index(np.asarray(begin), np.asarray(size), tuple(x.shape))
        except ValueError as e:
            raise _invalid(str(e)) from None
        return x[index]

    return run


@register_lowering("StridedSlice", const_inputs=(1, 2, 3))
def _strided_slice(node):
    _, jnp, _ = jax_modules()

    def run(x, begin, end, strides):
        dense = _dense_slice(node, x.shape, begin, end, strides)
        return jnp.reshape(jnp.asarray(x)[dense.index], dense.final_shape)

    return run


@register_lowering("StridedSliceGrad", const_inputs=(0, 1, 2, 3))
def _strided_slice_grad(node):
    _, jnp, _ = jax_modules()
    dt = _np(node.output_dtypes[0])

    def run(shape, begin, end, strides, dy):
        dims = _ints(shape)
        dense = _dense_slice(node, dims, begin, end, strides)
        if tuple(np.shape(dy)) != tuple(dense.final_shape):
            raise _invalid(f"shape of dy was {list(np.shape(dy))} instead of "
                           f"{list(dense.final_shape)}")
        part = jnp.zeros(dims, dt)[dense.index]
        return jnp.zeros(dims, dt).at[dense.index].set(jnp.reshape(dy, part.shape))

    return run


@register_lowering("Split", const_inputs=(0,))
def _split(node):
    _, jnp, _ = jax_modules()
    n = int(node.attr("num_split"))

    def run(axis, x):
        d = int(np.asarray(axis)) % max(x.ndim, 1)
        if x.shape[d] % n:
            raise _invalid(f"Number of ways to split should evenly divide the split dimension, "
                           f"but got split_dim {d} (size = {x.shape[d]}) and num_split {n}")
        return tuple(jnp.split(x, n, axis=d))

    return run


@register_lowering("SplitV", const_inputs=(1, 2))
def _split_v(node):
    _, jnp, _ = jax_modules()

    def run(x, size_splits, axis):
        d = int(np.asarray(axis)) % max(x.ndim, 1)
        sizes = list(_ints(size_splits))
        if -1 in sizes:
            k = sizes.index(-1)
            sizes[k] = x.shape[d] - (sum(sizes) + 1)
        if sum(sizes) != x.shape[d] or min(sizes, default=0) < 0:
            raise _invalid(f"Determined shape must either match input shape along split_dim "
                           f"exactly if fully specified, or be less than the size of the input "
                           f"along split_dim if not fully specified.  Got: {sum(sizes)}")
        return tuple(jnp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=d))

    return run


@register_lowering("Unpack")
def _unpack(node):
    _, jnp, _ = jax_modules()
    axis = int(node.attr("axis", 0))

    def run(x):
        d = axis % x.ndim
        return tuple(jnp.squeeze(p, d) for p in jnp.split(x, x.shape[d], axis=d))

    return run


def _gather(params, indices, axis: int, batch_dims: int):
    """TF's gather (XLA semantics: an out-of-range index gives zeros, not an error)."""
    _, jnp, _ = jax_modules()
    if batch_dims:
        jax = jax_modules()[0]
        fn = lambda p, i: _gather(p, i, axis - 1, batch_dims - 1)  # noqa: E731
        return jax.vmap(fn)(params, indices)
    return jnp.take(params, indices, axis=axis, mode="fill", fill_value=0)


@register_lowering("Gather")
def _gather_v1(node):
    return lambda params, indices: _gather(params, indices, 0, 0)


@register_lowering("GatherV2", const_inputs=(2,))
def _gather_v2(node):
    batch_dims = int(node.attr("batch_dims", 0) or 0)

    def run(params, indices, axis):
        a = int(np.asarray(axis))
        bd = batch_dims % np.ndim(indices) if batch_dims < 0 else batch_dims
        return _gather(params, indices, a % params.ndim, bd)

    return run


@register_lowering("UnsortedSegmentSum", const_inputs=(2,))
def _unsorted_segment_sum(node):
    jax, jnp, _ = jax_modules()

    def run(data, ids, num_segments):
        n, k = int(np.asarray(num_segments)), np.ndim(ids)
        flat = jnp.reshape(data, (-1,) + tuple(data.shape[k:]))
        return jax.ops.segment_sum(flat, jnp.reshape(ids, -1), n).astype(data.dtype)

    return run


@register_lowering("Select")
def _select(node):
    _, jnp, _ = jax_modules()

    def run(cond, t, e):
        if np.ndim(cond) == 1 and np.ndim(t) > 1:  # NOTE: a vector picks rows
            cond = jnp.reshape(cond, (-1,) + (1,) * (np.ndim(t) - 1))
        return jnp.where(cond, t, e)

    return run


register_simple_lowering("SelectV2", lambda jnp, lax: jnp.where)


@register_lowering("Pad", const_inputs=(1,))
def _pad(node):
    _, jnp, _ = jax_modules()
    return lambda x, paddings: jnp.pad(x, np.asarray(paddings).tolist())


@register_lowering("PadV2", const_inputs=(1,))
def _pad_v2(node):
    _, jnp, _ = jax_modules()
    return lambda x, paddings, value: jnp.pad(x, np.asarray(paddings).tolist(),
                                              constant_values=value)


@register_lowering("OneHot", const_inputs=(1,))
def _one_hot(node):
    jax, jnp, _ = jax_modules()
    axis = int(node.attr("axis", -1))

    def run(indices, depth, on, off):
        hot = jax.nn.one_hot(indices, int(np.asarray(depth)), dtype=bool, axis=axis)
        return jnp.where(hot, on, off)

    return run


def _arg_reduce(op: str, name: str) -> None:
    @register_lowering(op, const_inputs=(1,))
    def factory(node):
        _, jnp, _ = jax_modules()
        dt = _np(node.attr("output_type"))

        def run(x, axis):
            return getattr(jnp, name)(x, axis=int(np.asarray(axis)) % x.ndim).astype(dt)

        return run


_arg_reduce("ArgMax", "argmax")
_arg_reduce("ArgMin", "argmin")


# -- shape arithmetic: only with compile-time-constant inputs (folded by their CPU kernels) --
def _host_only(op: str) -> None:
    @register_lowering(op, const_inputs=tuple(range(16)))
    def factory(node):
        def run(*xs):
            raise _invalid(f"{op} on an XLA device needs compile-time constant inputs; "
                           f"place it on a CPU")

        return run


for _op in ("BroadcastGradientArgs", "Range", "InvertPermutation", "DynamicStitch",
            "ConcatOffset"):
    _host_only(_op)
