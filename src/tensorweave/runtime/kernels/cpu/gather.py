"""CPU kernels for the index-by-value array ops (see ops/gather_ops.py)."""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu import segment_rows
from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel


def _bad_index(indices, n: int):
    return invalid(_bad_index_message(indices, n))


def _bad_index_message(indices, n: int) -> str:
    """TF's 'indices[i,j] = v is not in [0, n)' for the first out-of-range index."""
    pos = tuple(np.argwhere((indices < 0) | (indices >= n))[0].tolist())
    return f"indices[{','.join(map(str, pos))}] = {np.asarray(indices)[pos]} is not in [0, {n})"


def _take(params, indices, axis: int):
    """np.take with TF's bounds check (negative indices are errors, not wrap-arounds)."""
    n = params.shape[axis]
    if indices.size and indices.min() < 0:
        raise _bad_index(indices, n)
    try:
        return np.take(params, indices, axis=axis)
    except IndexError:
        raise _bad_index(indices, n) from None


# -- Gather, GatherV2 -------------------------------------------------------------------------
@register_kernel("Gather")
def _gather(node):
    def run(params, indices):
        params = np.asarray(params)
        if params.ndim < 1:
            raise invalid("params must be at least 1 dimensional")
        return _take(params, np.asarray(indices), 0)

    return run


@register_kernel("GatherV2")
def _gather_v2(node):
    batch_dims = node.attr("batch_dims")

    def run(params, indices, axis):
        params, indices = np.asarray(params), np.asarray(indices)
        rank, a = params.ndim, int(axis)
        if not -rank <= a < rank:
            raise invalid(f"Expected axis in the range [{-rank}, {rank}), but got {a}")
        a %= rank
        b = batch_dims + indices.ndim if batch_dims < 0 else batch_dims
        if b == 0:
            return _take(params, indices, a)
        if indices.size and (indices.min() < 0 or indices.max() >= params.shape[a]):
            raise _bad_index(indices, params.shape[a])
        return _batched_gather(params, indices, a, b)

    return run


def _batched_gather(params, indices, axis, b):
    """GatherV2 with batch_dims b: out[n..] = take(params[n..], indices[n..], axis - b)."""
    if b > axis:
        raise invalid(f"batch_dims ({b}) must be less than or equal to axis ({axis}).")
    batch = params.shape[:b]
    for i in range(b):
        if params.shape[i] != indices.shape[i]:
            raise invalid(f"params.shape[{i}]: {params.shape[i]} should be equal to "
                          f"indices.shape[{i}]: {indices.shape[i]}")
    n = int(np.prod(batch, dtype=np.int64))
    ax = axis - b + 1
    p = np.moveaxis(params.reshape((n,) + params.shape[b:]), ax, 1)
    idx = indices.reshape((n,) + indices.shape[b:])
    rows = np.arange(n).reshape((n,) + (1,) * (idx.ndim - 1))
    g = p[rows, idx]                            # [n, I..., pre..., post...]
    n_i, n_pre = idx.ndim - 1, ax - 1
    perm = [0] + list(range(1 + n_i, 1 + n_i + n_pre)) + list(range(1, 1 + n_i)) + \
        list(range(1 + n_i + n_pre, g.ndim))
    g = g.transpose(perm)
    return g.reshape(batch + g.shape[1:])


# -- GatherNd, ScatterNd ----------------------------------------------------------------------
def _bad_nd_index(idx, bounds):
    bad = ((idx < 0) | (idx >= np.asarray(bounds, dtype=np.int64))).any(axis=1)
    return int(np.argmax(bad)) if bad.any() else None


@register_kernel("GatherNd")
def _gather_nd(node):
    def run(params, indices):
        params, indices = np.asarray(params), np.asarray(indices)
        k = indices.shape[-1]
        if k > params.ndim:
            raise invalid(f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                          f"{fmt_shape(indices.shape)} and params shape: "
                          f"{fmt_shape(params.shape)}")
        idx = indices.reshape(-1, k)
        bad = _bad_nd_index(idx, params.shape[:k])
        if bad is not None:
            pos = ",".join(map(str, np.unravel_index(bad, indices.shape[:-1])))
            raise invalid(f"indices[{pos}] = [{', '.join(map(str, idx[bad].tolist()))}] does "
                          f"not index into param shape {fmt_shape(params.shape)}")
        if k == 0:
            out = np.broadcast_to(params, (idx.shape[0],) + params.shape).copy()
        else:
            out = params[tuple(idx.T)]
        return out.reshape(indices.shape[:-1] + params.shape[k:])

    return run


@register_kernel("ScatterNd")
def _scatter_nd(node):
    dt = out_np(node)

    def run(indices, updates, shape):
        out_shape = tuple(shape.tolist())
        indices, updates = np.asarray(indices), np.asarray(updates)
        k = indices.shape[-1]
        idx = indices.reshape(-1, k)
        want = indices.shape[:-1] + out_shape[k:]
        if updates.shape != want or k > len(out_shape):
            raise invalid(f"Must have updates.shape = indices.shape[:batch_dim] + "
                          f"shape[slice_dim:], got updates.shape: {fmt_shape(updates.shape)}, "
                          f"indices.shape: {fmt_shape(indices.shape)}, shape: "
                          f"{fmt_shape(out_shape)}, slice_dim: {k}, and batch_dim: "
                          f"{indices.ndim - 1}")
        bad = _bad_nd_index(idx, out_shape[:k])
        if bad is not None:
            raise invalid(f"indices[{bad}] = [{', '.join(map(str, idx[bad].tolist()))}] does "
                          f"not index into shape {fmt_shape(out_shape)}")
        out = np.zeros(out_shape, dtype=dt)
        upd = updates.reshape((idx.shape[0],) + out_shape[k:])
        if k == 0:
            out += upd.sum(axis=0, dtype=dt)
        elif out.size:
            cells = np.ravel_multi_index(tuple(idx.T), out_shape[:k])
            segment_rows.add_rows(out.reshape((-1,) + out_shape[k:]), cells, upd)
        return out

    return run


# -- OneHot -----------------------------------------------------------------------------------
@register_kernel("OneHot")
def _one_hot(node):
    axis, dt = node.attr("axis"), out_np(node)

    def run(indices, depth, on_value, off_value):
        indices = np.asarray(indices)
        d, out_rank = int(depth), indices.ndim + 1
        if d < 0:
            raise invalid(f"depth must be non-negative, got: {d}")
        if axis != -1 and not 0 <= axis < out_rank:
            raise invalid(f"Expected axis to be -1 or between [0, {out_rank}).  But received: "
                          f"{axis}")
        hot = indices[..., None] == np.arange(d)
        out = np.where(hot, np.asarray(on_value, dtype=dt), np.asarray(off_value, dtype=dt))
        if axis not in (-1, out_rank - 1):
            out = np.moveaxis(out, -1, axis)
        return out

    return run


# -- Where, Select, SelectV2 ------------------------------------------------------------------
register_kernel("Where")(lambda node: lambda x: np.argwhere(x).astype(np.int64, copy=False))


@register_kernel("Select", forwards_input=True)
def _select(node):
    def run(cond, t, e):
        if np.ndim(cond) == 0:
            return t if cond else e
        ts, es, cs = np.shape(t), np.shape(e), np.shape(cond)
        if ts != es:
            raise invalid(f"'then' and 'else' must have the same size.  but are: "
                          f"{fmt_shape(ts)} vs. {fmt_shape(es)}")
        if cs == ts:
            return np.where(cond, t, e)
        if len(cs) == 1 and ts and cs[0] == ts[0]:
            return np.where(np.reshape(cond, (-1,) + (1,) * (len(ts) - 1)), t, e)
        raise invalid(f"'condition' must be a scalar, a vector with one element per row of "
                      f"'then', or the same shape as 'then': got {fmt_shape(cs)} vs. "
                      f"{fmt_shape(ts)}")

    return run


@register_kernel("SelectV2")
def _select_v2(node):
    def run(cond, t, e):
        try:
            return np.where(cond, t, e)
        except ValueError:
            raise invalid(f"condition {fmt_shape(np.shape(cond))}, then "
                          f"{fmt_shape(np.shape(t))}, and else {fmt_shape(np.shape(e))} must "
                          f"be broadcastable") from None

    return run


# -- Unique, ListDiff, InvertPermutation ------------------------------------------------------
@register_kernel("Unique")
def _unique(node):
    idx_dt = out_np(node, 1)

    def run(x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise invalid("unique expects a 1D vector.")
        if not x.size:
            return x.copy(), np.zeros(0, dtype=idx_dt)
        values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return values[order], rank[inverse.reshape(-1)].astype(idx_dt)

    return run


@register_kernel("ListDiff")
def _list_diff(node):
    idx_dt = out_np(node, 1)

    def run(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim != 1 or y.ndim != 1:
            raise invalid(f"{'x' if x.ndim != 1 else 'y'} should be a 1D vector.")
        if x.dtype == object:
            drop = set(y.tolist())
            keep = np.array([v not in drop for v in x.tolist()], dtype=bool)
        else:
            keep = ~np.isin(x, y)
        return x[keep], np.flatnonzero(keep).astype(idx_dt)

    return run


@register_kernel("InvertPermutation")
def _invert_permutation(node):
    def run(x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise invalid("invert_permutation expects a 1D vector.")
        n = x.size
        bad = (x < 0) | (x >= n)
        if bad.any():
            raise invalid(f"{x[bad][0]} is not between 0 and {n}")
        out = np.full(n, -1, dtype=x.dtype)
        out[x] = np.arange(n, dtype=x.dtype)
        if (out < 0).any():
            seen = np.zeros(n, dtype=bool)
            for v in x.tolist():
                if seen[v]:
                    raise invalid(f"{v} is duplicated in the input.")
                seen[v] = True
        return out

    return run
