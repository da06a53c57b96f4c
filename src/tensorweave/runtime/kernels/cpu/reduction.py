"""CPU kernels for reductions, ArgMax/ArgMin, Cumsum/Cumprod, segment ops and Bincount.

Reductions keep the input dtype (numpy would widen int32 sums to int64 and give float64 means
of integers); half precision is accumulated in float32 and rounded back, as TF does.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.cpu import segment_rows
from tensorweave.runtime.kernels.registry import register_kernel


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _np_dtype(dt) -> np.dtype:
    return dtypes.as_dtype(dt).base_dtype.np_dtype


def _accumulator(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 4 or dt.kind == "V" \
        else dt


def normalize_axes(axes, ndim: int) -> tuple[int, ...]:
    """The reduction axes as non-negative ints, checked as TF checks them.

    Raises:
      InvalidArgumentError: an axis out of [-ndim, ndim), or a repeated axis.
    """
    out: list[int] = []
    for a in np.reshape(axes, [-1]).tolist():
        if not -ndim <= a < ndim:
            raise _invalid(f"Invalid reduction dimension ({a} for input with {ndim} "
                           f"dimension(s)")
        a %= ndim
        if a in out:
            raise _invalid(f"Invalid reduction arguments: Axes contains duplicate dimension: "
                           f"{a}")
        out.append(a)
    return tuple(out)


class _AxesCache:
    """Remembers the normalized axes of the last read-only axes array (a Const's value comes
    back as the same object each step), so steady-state steps skip the Python loop."""

    __slots__ = ("_entry",)

    def __init__(self):
        self._entry = (None, -1, ())

    def __call__(self, axes, ndim: int) -> tuple[int, ...]:
        src, n, cached = self._entry
        if axes is src and n == ndim:
            return cached
        result = normalize_axes(axes, ndim)
        if isinstance(axes, np.ndarray) and not axes.flags.writeable:
            self._entry = (axes, ndim, result)
        return result


def _count(shape, axes) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _trunc_divide(s, n: int):
    """Integer s / n rounded toward zero (C++ semantics), n > 0."""
    q = np.floor_divide(s, n)
    return q + ((s < 0) & (q * n != s)).astype(q.dtype)


def _reduction(op: str, make, identity_when_no_axes: bool = True) -> None:
    """Registers reduction `op`: `make(dt, acc, keep)` returns `reduce(x, axes_tuple)`. Where a
    reduction over no axes is the identity (`identity_when_no_axes`), it forwards its input as
    TF's kernels do: a gradient's Sum over the broadcast axes of same-shaped operands, say,
    reduces nothing and should not copy a big tensor."""

    @register_kernel(op, forwards_input=identity_when_no_axes)
    def factory(node):
        dt = _np_dtype(node.output_dtypes[0])
        reduce = make(dt, _accumulator(dt), bool(node.attr("keep_dims")))
        axes_of = _AxesCache()

        def run(x, axes):
            x = np.asarray(x)
            ax = axes_of(axes, x.ndim)
            if not ax and identity_when_no_axes and x.dtype == dt:
                return x
            return reduce(x, ax)

        return run


def _ufunc_reduce(ufunc):
    def make(dt, acc, keep):
        if acc == dt:
            return lambda x, ax: ufunc.reduce(x, axis=ax, dtype=dt, keepdims=keep)
        return lambda x, ax: ufunc.reduce(x, axis=ax, dtype=acc, keepdims=keep).astype(dt)

    return make


def _make_mean(dt, acc, keep):
    integer = dt.kind in "iu"

    def reduce(x, ax):
        s = np.add.reduce(x, axis=ax, dtype=acc, keepdims=keep)
        n = _count(x.shape, ax)
        if n == 0:
            return np.asarray(s).astype(dt) if integer else (s / 0).astype(dt)
        return _trunc_divide(s, n).astype(dt, copy=False) if integer else (s / n).astype(
            dt, copy=False)

    return reduce


def _make_extremum(ufunc, pick):
    def make(dt, acc, keep):
        info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
        initial = dt.type(-np.inf if dt.kind == "f" and pick == "min" else
                          np.inf if dt.kind == "f" else
                          info.min if pick == "min" else info.max)
        return lambda x, ax: ufunc.reduce(x, axis=ax, keepdims=keep, initial=initial)

    return make


def _make_euclidean(dt, acc, keep):
    def reduce(x, ax):
        sq = np.real(x * np.conj(x)) if dt.kind == "c" else np.square(x, dtype=acc)
        out = np.sqrt(np.add.reduce(sq, axis=ax, keepdims=keep))
        return out.astype(dt)

    return reduce


_reduction("Sum", _ufunc_reduce(np.add))
_reduction("Prod", _ufunc_reduce(np.multiply))
_reduction("Mean", _make_mean)
# `initial` is the identity of the other end: an empty Max is the lowest value, as in TF.
_reduction("Max", _make_extremum(np.maximum, "min"))
_reduction("Min", _make_extremum(np.minimum, "max"))
_reduction("EuclideanNorm", _make_euclidean, identity_when_no_axes=False)  # |x|, not x
_reduction("All", lambda dt, acc, keep: lambda x, ax: np.logical_and.reduce(
    x, axis=ax, keepdims=keep))
_reduction("Any", lambda dt, acc, keep: lambda x, ax: np.logical_or.reduce(
    x, axis=ax, keepdims=keep))


# -- argmax / argmin --------------------------------------------------------------------------
def _scalar_axis(axis, ndim: int, what: str) -> int:
    if np.ndim(axis) != 0:
        raise _invalid(f"{what} must be a scalar, but received tensor of shape: "
                       f"{list(np.shape(axis))}")
    a = int(axis)
    if not -ndim <= a < ndim:
        raise _invalid(f"Expected dimension in the range [{-ndim}, {ndim}), but got {a}")
    return a % ndim


def _arg(op: str, fn) -> None:
    @register_kernel(op)
    def factory(node):
        out = _np_dtype(node.output_dtypes[0])

        def run(x, axis):
            x = np.asarray(x)
            a = _scalar_axis(axis, x.ndim, "dimension")
            if x.shape[a] == 0:
                raise _invalid(f"Reduction axis {a} is empty in shape {list(x.shape)}")
            return fn(x, axis=a).astype(out, copy=False)

        return run


_arg("ArgMax", np.argmax)
_arg("ArgMin", np.argmin)


# -- scans ------------------------------------------------------------------------------------
def _scan(op: str, ufunc, identity) -> None:
    @register_kernel(op)
    def factory(node):
        exclusive, reverse = bool(node.attr("exclusive")), bool(node.attr("reverse"))
        dt = _np_dtype(node.output_dtypes[0])

        def run(x, axis):
            x = np.asarray(x)
            a = _scalar_axis(axis, x.ndim, "axis")
            if reverse:
                x = np.flip(x, a)
            if exclusive:
                out = np.empty(x.shape, dt)
                head = [slice(None)] * x.ndim
                head[a] = slice(0, 1)
                out[tuple(head)] = identity
                head[a] = slice(1, None)
                rest = [slice(None)] * x.ndim
                rest[a] = slice(0, -1)
                ufunc.accumulate(x[tuple(rest)], axis=a, dtype=dt, out=out[tuple(head)])
            else:
                out = ufunc.accumulate(x, axis=a, dtype=dt)
            return np.flip(out, a) if reverse else out

        return run


_scan("Cumsum", np.add, 0)
_scan("Cumprod", np.multiply, 1)


# -- segments ---------------------------------------------------------------------------------
_SEGMENT_UFUNCS = {"Sum": np.add, "Prod": np.multiply, "Max": np.maximum, "Min": np.minimum,
                   "Mean": np.add}


def _identity(kind: str, dt: np.dtype):
    if kind in ("Sum", "Mean"):
        return dt.type(0)
    if kind == "Prod":
        return dt.type(1)
    if dt.kind == "f":
        return dt.type(-np.inf if kind == "Max" else np.inf)
    info = np.iinfo(dt)
    return dt.type(info.min if kind == "Max" else info.max)


def _scatter(kind: str, dt: np.dtype, rows: int, ids: np.ndarray, data: np.ndarray):
    """Reduces rows of `data` (flattened to match `ids`) into `rows` segments."""
    inner = data.shape[ids.ndim:]
    out = np.full((rows,) + inner, _identity(kind, dt), dt)
    flat_ids = ids.reshape(-1)
    flat = data.reshape((flat_ids.size,) + inner)
    if flat_ids.size and flat_ids.min() < 0:
        keep = flat_ids >= 0
        flat_ids, flat = flat_ids[keep], flat[keep]
    if kind in ("Sum", "Mean"):
        segment_rows.add_rows(out, flat_ids, flat)
    else:
        _SEGMENT_UFUNCS[kind].at(out, flat_ids, flat)
    return out


def _check_ids_fit(data: np.ndarray, ids: np.ndarray, rows: int) -> None:
    if data.shape[:ids.ndim] != ids.shape:
        raise _invalid(f"data.shape = {list(data.shape)} does not start with segment_ids.shape "
                       f"= {list(ids.shape)}")
    if ids.size and ids.max() >= rows:
        i = int(np.argmax(ids.reshape(-1) >= rows))
        raise _invalid(f"segment_ids[{i}] = {int(ids.reshape(-1)[i])} is out of range [0, "
                       f"{rows})")


def _unsorted_segment(kind: str) -> None:
    @register_kernel(f"UnsortedSegment{kind}")
    def factory(node):
        dt = _np_dtype(node.output_dtypes[0])

        def run(data, ids, num_segments):
            data, ids = np.asarray(data), np.asarray(ids)
            rows = int(num_segments)
            if rows < 0:
                raise _invalid(f"Input num_segments == {rows} must be non-negative.")
            _check_ids_fit(data, ids, rows)
            return _scatter(kind, dt, rows, ids, data)

        return run


def _sorted_ids(data: np.ndarray, ids: np.ndarray) -> int:
    """Checks sorted 1-D segment ids; returns the number of output rows."""
    if ids.ndim != 1:
        raise _invalid(f"segment_ids should be a vector, got shape {list(ids.shape)}")
    if data.ndim == 0 or ids.shape[0] != data.shape[0]:
        raise _invalid("segment_ids should be the same size as dimension 0 of input.")
    if not ids.size:
        return 0
    if ids[0] < 0:
        raise _invalid(f"segment ids must be >= 0, got {int(ids[0])}")
    if np.any(ids[1:] < ids[:-1]):
        raise _invalid("segment ids are not increasing")
    return int(ids[-1]) + 1


def _segment(kind: str) -> None:
    @register_kernel(f"Segment{kind}")
    def factory(node):
        dt = _np_dtype(node.output_dtypes[0])

        def run(data, ids):
            data, ids = np.asarray(data), np.asarray(ids)
            rows = _sorted_ids(data, ids)
            out = _scatter(kind, dt, rows, ids, data)
            if kind == "Sum":
                return out
            counts = np.bincount(ids, minlength=rows).reshape((rows,) + (1,) * (out.ndim - 1))
            if kind == "Mean":
                n = np.maximum(counts, 1)
                out = _trunc_divide(out, n) if dt.kind in "iu" else out / n
            return np.where(counts == 0, dt.type(0), out).astype(dt, copy=False)

        return run


for _kind in ("Sum", "Prod", "Max", "Min"):
    _unsorted_segment(_kind)
for _kind in ("Sum", "Mean", "Prod", "Max", "Min"):
    _segment(_kind)


@register_kernel("Bincount")
def _bincount(node):
    dt = _np_dtype(node.output_dtypes[0])

    def run(arr, size, weights):
        n, flat = int(size), np.reshape(arr, [-1])
        if n < 0:
            raise _invalid(f"size ({n}) must be non-negative")
        if flat.size and flat.min() < 0:
            raise _invalid("Input arr must be non-negative!")
        keep = flat < n
        w = np.reshape(weights, [-1])
        if w.size:
            return np.bincount(flat[keep], weights=w[keep], minlength=n)[:n].astype(dt)
        return np.bincount(flat[keep], minlength=n)[:n].astype(dt)

    return run
