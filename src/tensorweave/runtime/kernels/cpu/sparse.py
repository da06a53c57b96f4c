"""CPU kernels for the sparse ops (ops/sparse_ops.py): sparse segment reductions and their
gradients, SparseReshape, SparseFillEmptyRows(+Grad). Error messages are TensorFlow's."""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu import segment_rows
from tensorweave.runtime.kernels.cpu.array import invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel


# -- sparse segment reductions ---------------------------------------------------------------
def _check_segments(data, indices, segment_ids, rows):
    if indices.ndim != 1:
        raise invalid("indices should be a vector.")
    if segment_ids.ndim != 1:
        raise invalid("segment_ids should be a vector.")
    if indices.size != segment_ids.size:
        raise invalid("segment_ids and indices should have same size.")
    if segment_ids.size and np.any(np.diff(segment_ids) < 0):
        raise invalid("segment ids are not increasing")
    if segment_ids.size and (segment_ids[0] < 0 or segment_ids[-1] >= rows):
        bad = segment_ids[-1] if segment_ids[-1] >= rows else segment_ids[0]
        raise invalid(f"Segment id {int(bad)} out of range [0, {rows}), possibly because "
                      f"'segment_ids' input is not sorted.")
    bad = (indices < 0) | (indices >= data.shape[0])
    if bad.any():
        j = int(np.argmax(bad))
        raise invalid(f"Bad: indices[{j}] == {int(indices[j])} out of range [0, "
                      f"{data.shape[0]})")


def _segment_scale(kind: str, counts: np.ndarray, dt) -> np.ndarray:
    """Per-segment divisor: 1 (Sum), the count (Mean) or its square root (SqrtN), >= 1."""
    counts = np.maximum(counts, 1).astype(np.float64)
    if kind == "Mean":
        return counts.astype(dt)
    if kind == "SqrtN":
        return np.sqrt(counts).astype(dt)
    return np.ones_like(counts, dt)


def sparse_segment(kind: str, data, indices, segment_ids, rows=None) -> np.ndarray:
    data, indices = np.asarray(data), np.asarray(indices).astype(np.int64)
    segment_ids = np.asarray(segment_ids).astype(np.int64)
    if data.ndim < 1:
        raise invalid("data must be at least rank 1")
    if rows is None:
        rows = int(segment_ids[-1]) + 1 if segment_ids.size else 0
    _check_segments(data, indices, segment_ids, rows)
    calc = np.float32 if data.dtype in (np.float16,) or data.dtype.kind == "V" else data.dtype
    out = np.zeros((rows,) + data.shape[1:], calc)
    segment_rows.add_rows(out, segment_ids, data[indices].astype(calc, copy=False))
    if kind != "Sum":
        counts = np.bincount(segment_ids, minlength=rows)
        out /= _segment_scale(kind, counts, calc).reshape((rows,) + (1,) * (data.ndim - 1))
    return out.astype(data.dtype)


def _segment_kernel(kind: str, with_num: bool):
    def factory(node):
        def run(data, indices, segment_ids, *num):
            rows = None
            if with_num:
                rows = int(num[0])
                if rows < 0:
                    raise invalid(f"Input num_segments == {rows} must be non-negative.")
            return sparse_segment(kind, data, indices, segment_ids, rows)

        return run

    return factory


for _kind in ("Sum", "Mean", "SqrtN"):
    register_kernel(f"SparseSegment{_kind}")(_segment_kernel(_kind, False))
    register_kernel(f"SparseSegment{_kind}WithNumSegments")(_segment_kernel(_kind, True))


def _segment_grad_kernel(kind: str):
    """d data[indices[j]] += grad[segment_ids[j]] / scale(segment), [output_dim0, ...]."""

    def factory(node):
        def run(grad, indices, segment_ids, output_dim0):
            grad = np.asarray(grad)
            indices = np.asarray(indices).astype(np.int64)
            segment_ids = np.asarray(segment_ids).astype(np.int64)
            n = int(output_dim0)
            if indices.size != segment_ids.size:
                raise invalid("segment_ids and indices should have same size.")
            bad = (indices < 0) | (indices >= n)
            if bad.any():
                j = int(np.argmax(bad))
                raise invalid(f"Index {int(indices[j])} out of range [0, {n}).")
            counts = np.bincount(segment_ids, minlength=grad.shape[0])
            scale = _segment_scale(kind, counts, grad.dtype)
            rows = grad / scale.reshape((-1,) + (1,) * (grad.ndim - 1))
            out = np.zeros((n,) + grad.shape[1:], grad.dtype)
            segment_rows.add_rows(out, indices, rows[segment_ids])
            return out

        return run

    return factory


for _kind in ("Mean", "SqrtN"):
    register_kernel(f"SparseSegment{_kind}Grad")(_segment_grad_kernel(_kind))


# -- SparseReshape -----------------------------------------------------------------------------
def _new_shape(in_shape: np.ndarray, target: np.ndarray) -> np.ndarray:
    total = int(np.prod(in_shape, dtype=np.int64))
    unknown = np.flatnonzero(target == -1)
    if unknown.size > 1:
        raise invalid(f"only one output dimension may be -1, not both {unknown[0]} and "
                      f"{unknown[1]}")
    bad = np.flatnonzero(target < -1)
    if bad.size:
        raise invalid(f"size {bad[0]} must be non-negative, not {target[bad[0]]}")
    out = target.copy()
    known = int(np.prod(np.where(target == -1, 1, target), dtype=np.int64))
    if unknown.size:
        if known == 0 or total % known:
            raise invalid(f"Input to reshape is a SparseTensor with {total} dense values, but "
                          f"the requested shape requires a multiple of {known}. "
                          f"inputShape={_fmt(in_shape)} outputShape={_fmt(target)}")
        out[unknown[0]] = total // known
    elif known != total:
        raise invalid(f"Input to reshape is a tensor with {total} dense values, but the "
                      f"requested shape has {known}. inputShape={_fmt(in_shape)} "
                      f"outputShape={_fmt(target)}")
    return out


def _fmt(v) -> str:
    return "[" + ",".join(str(int(x)) for x in v) + "]"


@register_kernel("SparseReshape")
def _sparse_reshape(node):
    def run(indices, in_shape, target):
        indices = np.asarray(indices, np.int64).reshape(-1, np.size(in_shape))
        in_shape, target = np.asarray(in_shape, np.int64), np.asarray(target, np.int64)
        if in_shape.ndim != 1 or target.ndim != 1:
            raise invalid("Input shape and new shape should be a vector")
        out_shape = _new_shape(in_shape, target)
        if indices.shape[0] == 0:
            return np.zeros((0, out_shape.size), np.int64), out_shape
        flat = np.ravel_multi_index(tuple(indices.T), tuple(in_shape)) if in_shape.size \
            else np.zeros(indices.shape[0], np.int64)
        new = np.stack(np.unravel_index(flat, tuple(out_shape)), axis=1) if out_shape.size \
            else np.zeros((indices.shape[0], 0), np.int64)
        return new.astype(np.int64), out_shape

    return run


# -- SparseFillEmptyRows -----------------------------------------------------------------------
@register_kernel("SparseFillEmptyRows")
def _sparse_fill_empty_rows(node):
    dt = out_np(node, 1)

    def run(indices, values, dense_shape, default_value):
        indices, values = np.asarray(indices, np.int64), np.asarray(values)
        dense_shape = np.asarray(dense_shape, np.int64)
        if np.ndim(default_value) != 0:
            raise invalid("default_value must be a scalar")
        if indices.ndim != 2 or values.ndim != 1 or indices.shape[0] != values.shape[0]:
            raise invalid(f"indices and values must describe N entries: indices.shape = "
                          f"{list(indices.shape)}, values.shape = {list(values.shape)}")
        rows = int(dense_shape[0]) if dense_shape.size else 0
        n = indices.shape[0]
        if n and (indices[:, 0] < 0).any() or n and (indices[:, 0] >= rows).any():
            j = int(np.argmax((indices[:, 0] < 0) | (indices[:, 0] >= rows)))
            raise invalid(f"indices({j}, 0) is invalid: {int(indices[j, 0])} >= {rows}")
        counts = np.bincount(indices[:, 0], minlength=rows) if n else np.zeros(rows, np.int64)
        empty = counts == 0
        if not empty.any() and (n < 2 or np.all(np.diff(indices[:, 0]) >= 0)):
            return indices, values.astype(dt), empty, np.arange(n, dtype=np.int64)
        fill_rows = np.flatnonzero(empty)
        fill = np.zeros((fill_rows.size, indices.shape[1]), np.int64)
        fill[:, 0] = fill_rows
        all_idx = np.concatenate([indices, fill])
        all_vals = np.concatenate([values.astype(dt), np.full(fill_rows.size, default_value,
                                                              dt)])
        order = np.argsort(all_idx[:, 0], kind="stable")
        reverse = np.empty(n + fill_rows.size, np.int64)
        reverse[order] = np.arange(order.size)
        return all_idx[order], all_vals[order], empty, reverse[:n]

    return run


@register_kernel("SparseFillEmptyRowsGrad")
def _sparse_fill_empty_rows_grad(node):
    def run(reverse_index_map, grad_values):
        reverse_index_map, grad_values = np.asarray(reverse_index_map), np.asarray(grad_values)
        d_values = grad_values[reverse_index_map]
        used = np.zeros(grad_values.shape[0], bool)
        used[reverse_index_map] = True
        return d_values, grad_values[~used].sum(dtype=grad_values.dtype)

    return run


# -- reorder, reduce, matmul, add, concat, slice, softmax -----------------------------------
def _sp(indices, values, shape):
    indices = np.asarray(indices, np.int64)
    shape = np.asarray(shape, np.int64)
    return indices.reshape(-1, shape.size), np.asarray(values), shape


def _row_major(indices, shape) -> np.ndarray:
    """The stable order that sorts `indices` lexicographically (row-major)."""
    if indices.shape[0] == 0 or shape.size == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


@register_kernel("SparseReorder")
def _sparse_reorder(node):
    def run(indices, values, shape):
        indices, values, shape = _sp(indices, values, shape)
        order = _row_major(indices, shape)
        return indices[order], values[order]

    return run


def _densify(indices, values, shape, dtype=None):
    out = np.zeros(tuple(shape), dtype or values.dtype)
    if indices.shape[0]:
        np.add.at(out, tuple(indices.T), values)
    return out


@register_kernel("SparseReduceSum")
def _sparse_reduce_sum(node):
    keep = bool(node.attr("keep_dims"))

    def run(indices, values, shape, axes):
        indices, values, shape = _sp(indices, values, shape)
        rank = shape.size
        axes = [int(a) for a in np.asarray(axes).reshape(-1)] or list(range(rank))
        for a in axes:
            if not -rank <= a < rank:
                raise invalid(f"Invalid reduction dimension {a}, for input with {rank} "
                              f"dimensions.")
        dense = _densify(indices, values, shape)
        return np.sum(dense, axis=tuple(a % rank for a in axes), keepdims=keep).astype(
            values.dtype)

    return run


@register_kernel("SparseTensorDenseMatMul")
def _sparse_dense_matmul(node):
    adj_a, adj_b = bool(node.attr("adjoint_a")), bool(node.attr("adjoint_b"))

    def run(indices, values, shape, b):
        indices, values, shape = _sp(indices, values, shape)
        b = np.asarray(b)
        if shape.size != 2 or b.ndim != 2:
            raise invalid(f"Tensor 'a_shape' is not a vector of length 2 or b is not a matrix: "
                          f"{list(shape)} vs {list(b.shape)}")
        rows, cols = (indices[:, 1], indices[:, 0]) if adj_a else (indices[:, 0], indices[:, 1])
        out_rows, inner = (shape[1], shape[0]) if adj_a else (shape[0], shape[1])
        bm = b.conj().T if adj_b else b
        if bm.shape[0] != inner:
            raise invalid(f"Cannot multiply A and B because inner dimension does not match: "
                          f"{inner} vs. {bm.shape[0]}.  Did you forget a transpose?  "
                          f"Dimensions of A: [{shape[0]}, {shape[1]}).  Dimensions of B: "
                          f"{list(b.shape)}")
        bad = (cols < 0) | (cols >= inner) | (rows < 0) | (rows >= out_rows)
        if bad.any():
            raise invalid(f"k ({int(cols[np.argmax(bad)])}) from index["
                          f"{int(np.argmax(bad))},1] out of bounds (>={inner})")
        vals = values.conj() if adj_a else values
        out = np.zeros((int(out_rows), bm.shape[1]), np.result_type(values, b))
        np.add.at(out, rows, vals[:, None] * bm[cols])
        return out

    return run


def _add_sparse(a_idx, a_val, a_shape, b_idx, b_val, b_shape, thresh):
    if not np.array_equal(a_shape, b_shape):
        raise invalid(f"Operands do not have the same ranks; got shapes: {list(a_shape)} and "
                      f"{list(b_shape)}")
    both = np.concatenate([a_idx, b_idx])
    vals = np.concatenate([a_val, b_val])
    if both.shape[0] == 0:
        return both, vals, a_shape
    uniq, inverse = np.unique(both, axis=0, return_inverse=True)
    sums = np.zeros(uniq.shape[0], np.result_type(a_val, b_val))
    np.add.at(sums, inverse.reshape(-1), vals)
    keep = np.abs(sums) >= thresh
    # NOTE: TF keeps an entry present in only one operand whatever the threshold
    counts = np.bincount(inverse.reshape(-1), minlength=uniq.shape[0])
    keep |= counts == 1
    return uniq[keep], sums[keep].astype(a_val.dtype), a_shape


@register_kernel("SparseAdd")
def _sparse_add(node):
    def run(a_idx, a_val, a_shape, b_idx, b_val, b_shape, thresh):
        a_idx, a_val, a_shape = _sp(a_idx, a_val, a_shape)
        b_idx, b_val, b_shape = _sp(b_idx, b_val, b_shape)
        return _add_sparse(a_idx, a_val, a_shape, b_idx, b_val, b_shape, thresh)

    return run


@register_kernel("SparseAddGrad")
def _sparse_add_grad(node):
    def run(grad, a_idx, b_idx, sum_idx):
        grad, sum_idx = np.asarray(grad), np.asarray(sum_idx, np.int64)
        where = {tuple(r): i for i, r in enumerate(sum_idx.tolist())}

        def pick(idx):
            idx = np.asarray(idx, np.int64)
            out = np.zeros(idx.shape[0], grad.dtype)
            for i, r in enumerate(idx.tolist()):
                j = where.get(tuple(r))
                if j is not None:
                    out[i] = grad[j]
            return out

        return pick(a_idx), pick(b_idx)

    return run


@register_kernel("SparseTensorDenseAdd")
def _sparse_dense_add(node):
    def run(indices, values, shape, b):
        indices, values, shape = _sp(indices, values, shape)
        b = np.asarray(b)
        if tuple(shape) != b.shape:
            raise invalid(f"Dimensions [0,{shape.size}) of indices[shape="
                          f"{list(indices.shape)}] = {list(shape)} must match dims of "
                          f"b[shape={list(b.shape)}]")
        out = b.copy()
        if indices.shape[0]:
            np.add.at(out, tuple(indices.T), values)
        return out

    return run


@register_kernel("SparseConcat")
def _sparse_concat(node):
    n, axis = node.attr("N"), int(node.attr("concat_dim"))

    def run(*args):
        parts = [_sp(args[i], args[n + i], args[2 * n + i]) for i in range(n)]
        rank = parts[0][2].size
        ax = axis % rank if -rank <= axis < rank else None
        if ax is None:
            raise invalid(f"Concat dimension must be in range [{-rank}, {rank}), got {axis}")
        for _, _, shape in parts[1:]:
            same = np.delete(shape, ax) == np.delete(parts[0][2], ax)
            if shape.size != rank or not same.all():
                raise invalid(f"Input shapes must match: got {list(parts[0][2])} and "
                              f"{list(shape)} for non-concat dimensions")
        offset, all_idx, all_val = 0, [], []
        for idx, val, shape in parts:
            shifted = idx.copy()
            shifted[:, ax] += offset
            all_idx.append(shifted)
            all_val.append(val)
            offset += int(shape[ax])
        indices, values = np.concatenate(all_idx), np.concatenate(all_val)
        out_shape = parts[0][2].copy()
        out_shape[ax] = offset
        order = _row_major(indices, out_shape)
        return indices[order], values[order], out_shape

    return run


@register_kernel("SparseSlice")
def _sparse_slice(node):
    def run(indices, values, shape, start, size):
        indices, values, shape = _sp(indices, values, shape)
        start, size = np.asarray(start, np.int64), np.asarray(size, np.int64)
        if start.size != shape.size or size.size != shape.size:
            raise invalid(f"Expected start and size to have {shape.size} elements: got "
                          f"{start.size} and {size.size}")
        end = np.minimum(start + size, shape)
        inside = np.all((indices >= start) & (indices < end), axis=1)
        out_shape = np.maximum(end - start, 0)
        return (indices[inside] - start).astype(np.int64), values[inside], out_shape

    return run


@register_kernel("SparseSoftmax")
def _sparse_softmax(node):
    def run(indices, values, shape):
        indices, values, shape = _sp(indices, values, shape)
        if shape.size < 2:
            raise invalid(f"Input should have rank >= 2, but received shape: {list(shape)}")
        out = np.empty_like(values)
        rows = [tuple(r) for r in indices[:, :-1].tolist()]
        groups: dict = {}
        for i, r in enumerate(rows):
            groups.setdefault(r, []).append(i)
        for members in groups.values():
            v = values[members].astype(np.float64)
            e = np.exp(v - v.max())
            out[members] = (e / e.sum()).astype(values.dtype)
        return out

    return run


@register_kernel("SparseReduceMax")
def _sparse_reduce_max(node):
    keep = bool(node.attr("keep_dims"))

    def run(indices, values, shape, axes):
        indices, values, shape = _sp(indices, values, shape)
        rank = shape.size
        axes = [int(a) for a in np.asarray(axes).reshape(-1)] or list(range(rank))
        for a in axes:
            if not -rank <= a < rank:
                raise invalid(f"Invalid reduction dimension {a}, for input with {rank} "
                              f"dimensions.")
        picked = {a % rank for a in axes}
        out_shape = [1 if d in picked else int(shape[d]) for d in range(rank)]
        low = np.finfo(values.dtype).min if values.dtype.kind == "f" else \
            np.iinfo(values.dtype).min
        out = np.full(out_shape, low, values.dtype)
        if indices.shape[0]:
            cells = indices.copy()
            cells[:, sorted(picked)] = 0
            np.maximum.at(out, tuple(cells.T), values)
        out[out == low] = 0  # NOTE: as TF, a cell with no present value is 0
        return out if keep else out.reshape([int(shape[d]) for d in range(rank)
                                             if d not in picked])

    return run


def _sparse_pair_kernel(fn):
    def factory(node):
        def run(a_idx, a_val, a_shape, b_idx, b_val, b_shape):
            a_idx, a_val, a_shape = _sp(a_idx, a_val, a_shape)
            b_idx, b_val, b_shape = _sp(b_idx, b_val, b_shape)
            if not np.array_equal(a_shape, b_shape):
                raise invalid(f"Operands' shapes do not match: got {list(a_shape)} and "
                              f"{list(b_shape)}")
            both = np.concatenate([a_idx, b_idx])
            if both.shape[0] == 0:
                return both, np.concatenate([a_val, b_val])
            uniq, inverse = np.unique(both, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            av = np.zeros(uniq.shape[0], a_val.dtype)
            bv = np.zeros(uniq.shape[0], b_val.dtype)
            av[inverse[:a_idx.shape[0]]] = a_val
            bv[inverse[a_idx.shape[0]:]] = b_val
            return uniq, fn(av, bv)

        return run

    return factory


register_kernel("SparseSparseMaximum")(_sparse_pair_kernel(np.maximum))
register_kernel("SparseSparseMinimum")(_sparse_pair_kernel(np.minimum))


@register_kernel("SparseSplit")
def _sparse_split(node):
    n = int(node.attr("num_split"))

    def run(split_dim, indices, values, shape):
        indices, values, shape = _sp(indices, values, shape)
        dim = int(split_dim)
        if not -shape.size <= dim < shape.size:
            raise invalid(f"Input split_dim should be between {-shape.size} and "
                          f"{shape.size}, got {dim}")
        dim %= shape.size
        size = int(shape[dim])
        if n > size:
            raise invalid(f"Input num_split should be between 1 and {size}, got {n}")
        lengths = [size // n + (1 if i < size % n else 0) for i in range(n)]
        starts = np.cumsum([0] + lengths)
        outs_i, outs_v, outs_s = [], [], []
        for i in range(n):
            inside = (indices[:, dim] >= starts[i]) & (indices[:, dim] < starts[i + 1])
            part = indices[inside].copy()
            part[:, dim] -= starts[i]
            piece = shape.copy()
            piece[dim] = lengths[i]
            outs_i.append(part)
            outs_v.append(values[inside])
            outs_s.append(piece)
        return (*outs_i, *outs_v, *outs_s)

    return run
