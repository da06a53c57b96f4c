"""CPU kernels for state ops: variables (as `Ref`s) and the ops that mutate them.

A variable kernel finds its `Ref` in the device's resource container at plan-build time
(`container`, `shared_name` or the node name), so every plan of a session shares it. Mutating
kernels hold `ref.lock`. `Assign` copies into the stored array when the shape is unchanged
(as TF's AssignOp copies into the existing buffer), else stores a fresh array (never the
assigned input); the update ops change the stored array in place. So a tensor that aliases the
variable's buffer (a `_Send` of the ref waiting for its transfer) sees every later update.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu import segment_rows
from tensorweave.runtime.kernels.registry import register_kernel
from tensorweave.runtime.resources import Ref


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


# -- variables -------------------------------------------------------------------------------
def _variable_ref(node) -> Ref:
    """The node's Ref: shared through the resource container when there is one."""
    dtype, shape = node.attr("dtype"), node.attr("shape")
    name = node.attr("shared_name") or node.name

    def create():
        return Ref(node.name, dtype, shape)

    if node.resources is None:
        return create()
    ref = node.resources.lookup_or_create(node.attr("container") or "", name, create)
    if not isinstance(ref, Ref) or ref.dtype != dtype:
        found = getattr(ref, "dtype", type(ref).__name__)
        raise _invalid(f"Shared variable '{name}' has dtype {getattr(found, 'name', found)}, "
                       f"but node '{node.name}' wants {dtype.name}")
    return ref


def _variable(node):
    ref = _variable_ref(node)

    def run():
        return ref

    return run


register_kernel("VariableV2")(_variable)
register_kernel("Variable")(_variable)


@register_kernel("TemporaryVariable", context=True)
def _temporary_variable(node):
    """A Ref that lives for one step (kept in the step context until destroyed)."""
    np_dtype, shape = node.attr("dtype").np_dtype, node.attr("shape").as_list()
    key = ("TemporaryVariable", node.attr("var_name") or node.name)

    def run(ctx):
        ref = ctx.extra.get(key)
        if ref is None:
            ref = ctx.extra[key] = Ref(key[1], node.attr("dtype"), node.attr("shape"))
            ref.value = np.zeros(shape, np_dtype)
        return ref

    return run


@register_kernel("DestroyTemporaryVariable", context=True)
def _destroy_temporary_variable(node):
    key = ("TemporaryVariable", node.attr("var_name"))

    def run(ctx, ref):
        ctx.extra.pop(key, None)
        with ref.lock:
            value = ref.read()
            ref.value = None
        return value

    return run


@register_kernel("IsVariableInitialized")
def _is_initialized(node):
    def run(ref):
        return np.asarray(ref.value is not None)

    return run


# -- assignment ------------------------------------------------------------------------------
@register_kernel("Assign")
def _assign(node):
    validate = node.attr("validate_shape")
    np_dtype = node.attr("T").np_dtype

    def run(ref, value):
        value = np.asarray(value, dtype=np_dtype)
        with ref.lock:
            old = ref.value
            if validate and old is not None and old.shape != value.shape:
                raise _invalid("Assign requires shapes of both tensors to match. lhs shape= "
                               f"{_fmt(old.shape)} rhs shape= {_fmt(value.shape)}")
            if old is not None and old.shape == value.shape and old.flags.writeable:
                np.copyto(old, value)  # NOTE: TF's AssignOp copies into the existing buffer
            else:
                ref.value = np.array(value)  # NOTE: a copy: the input may be a constant
        return ref

    return run


def _dense_update(ufunc):
    def factory(node):
        def run(ref, value):
            with ref.lock:
                params = ref.read()
                if params.shape != np.shape(value):
                    raise _invalid("Parameters and update must be the same size: lhs shape= "
                                   f"{_fmt(params.shape)} rhs shape= {_fmt(np.shape(value))}")
                ufunc(params, value, out=params)
            return ref

        return run

    return factory


register_kernel("AssignAdd")(_dense_update(np.add))
register_kernel("AssignSub")(_dense_update(np.subtract))


@register_kernel("CountUpTo")
def _count_up_to(node):
    limit = node.attr("limit")

    def run(ref):
        with ref.lock:
            value = ref.read()
            before = value.copy()
            if before >= limit:
                raise errors.OutOfRangeError(None, None, f"Reached limit of {limit}")
            value += 1
        return before

    return run


# -- scatter ---------------------------------------------------------------------------------
_SCATTER = {
    "ScatterUpdate": None, "ScatterAdd": np.add, "ScatterSub": np.subtract,
    "ScatterMul": np.multiply, "ScatterDiv": np.divide, "ScatterMin": np.minimum,
    "ScatterMax": np.maximum,
}


def _check_indices(indices, limit: int) -> None:
    flat = np.reshape(indices, -1)
    bad = np.flatnonzero((flat < 0) | (flat >= limit))
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"indices[{i}] = {int(flat[i])} is not in [0, {limit})")


def _scatter_updates(params, indices, updates):
    """`updates` broadcast to indices.shape + params.shape[1:] (a scalar fills), or an error."""
    want = np.shape(indices) + params.shape[1:]
    updates = np.asarray(updates)
    if updates.ndim == 0:
        return np.broadcast_to(updates, want)
    if updates.shape != want:
        raise _invalid(f"Must have updates.shape = indices.shape + params.shape[1:] or "
                       f"updates.shape = [], got updates.shape {_fmt(updates.shape)}, "
                       f"indices.shape {_fmt(np.shape(indices))}, params.shape "
                       f"{_fmt(params.shape)}")
    return updates


def _scatter(op_type: str):
    ufunc = _SCATTER[op_type]

    def factory(node):
        int_div = op_type == "ScatterDiv" and not node.attr("T").is_floating \
            and not node.attr("T").is_complex

        def run(ref, indices, updates):
            with ref.lock:
                params = ref.read()
                if params.ndim == 0:
                    raise _invalid("params must be at least 1-D, got shape []")
                _check_indices(indices, params.shape[0])
                upd = _scatter_updates(params, indices, updates)
                if ufunc is None:
                    params[indices] = upd
                elif int_div:
                    _scatter_int_div(params, np.reshape(indices, -1),
                                     np.reshape(upd, (-1,) + params.shape[1:]))
                elif ufunc in (np.add, np.subtract):
                    segment_rows.add_rows(params, indices, upd, ufunc is np.subtract)
                else:
                    ufunc.at(params, indices, upd)
            return ref

        return run

    return factory


def _scatter_int_div(params, idx, upd) -> None:
    for i, u in zip(idx, upd):
        params[i] = np.trunc(np.true_divide(params[i], u)).astype(params.dtype)


for _op in _SCATTER:
    register_kernel(_op)(_scatter(_op))


def _scatter_nd(ufunc):
    def factory(node):
        def run(ref, indices, updates):
            with ref.lock:
                params = ref.read()
                index = _nd_index(params, np.asarray(indices), np.shape(updates))
                if ufunc is None:
                    params[index] = updates
                elif index and params.flags.c_contiguous and params.size:
                    _scatter_nd_rows(params, index, updates, ufunc is np.subtract)
                else:
                    ufunc.at(params, index, updates)
            return ref

        return run

    return factory


def _scatter_nd_rows(params, index: tuple, updates, subtract: bool) -> None:
    """ScatterNdAdd/Sub as a row scatter over params viewed as (cells, slice...)."""
    depth = len(index)
    cells = np.ravel_multi_index(index, params.shape[:depth]).reshape(-1)
    rows = params.reshape((-1,) + params.shape[depth:])
    segment_rows.add_rows(rows, cells, np.reshape(updates, cells.shape + params.shape[depth:]),
                          subtract)


def _nd_index(params, indices, updates_shape) -> tuple:
    """indices[..., K] → a tuple of K index arrays, bounds- and shape-checked."""
    depth = indices.shape[-1]
    if depth > params.ndim:
        raise _invalid(f"Dimension must be <= {params.ndim} but is {depth}")
    want = indices.shape[:-1] + params.shape[depth:]
    if tuple(updates_shape) != want:
        raise _invalid(f"updates shape {_fmt(updates_shape)} must be indices.shape[:-1] + "
                       f"params.shape[indices.shape[-1]:] = {_fmt(want)}")
    flat = indices.reshape(-1, depth)
    bad = np.flatnonzero(np.any((flat < 0) | (flat >= np.asarray(params.shape[:depth])), axis=1))
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"indices[{i}] = {_fmt(flat[i].tolist())} does not index into param "
                       f"shape {_fmt(params.shape)}")
    return tuple(np.moveaxis(indices, -1, 0))


register_kernel("ScatterNdUpdate")(_scatter_nd(None))
register_kernel("ScatterNdAdd")(_scatter_nd(np.add))
register_kernel("ScatterNdSub")(_scatter_nd(np.subtract))
