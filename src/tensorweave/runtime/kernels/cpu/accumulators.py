"""CPU kernels of TF's conditional accumulators (ConditionalAccumulator and its sparse twin).

An accumulator lives in the device's resource container (shared by `shared_name`, else one
per node) and flows as the value of its handle (a `Ref(string)` in TF1, a `resource` in the
`Resource*` ops). It aggregates the gradients of one global step:

- apply: a gradient whose `local_step` is older than the accumulator's global step is stale
  and dropped silently; the others are summed (the sparse one per index, merging the two index
  lists in order as TF does) and counted. Shapes are checked first, stale or not.
- take(num_required): blocks until `num_required` gradients arrived, then returns their mean
  (`reduction_type` MEAN; per index for the sparse one) or sum, empties the accumulator and
  advances its global step by one.
- set_global_step: moves the global step (a smaller value logs a warning, as in TF).

Blocking contract: a take waits on the accumulator's condition in short slices, honouring the
step (`ctx.check()`: DeadlineExceededError at the deadline, step cancellation) and the session
(`close()` wakes every waiter with CancelledError). Thread-safety: every method may be called
from any thread.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.registry import register_kernel

_LOG = logging.getLogger("tensorweave")
_SLICE_S = 0.05


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _shape_str(dims) -> str:
    """TF's DebugString of a (partial) shape: `[2,?]`, `<unknown>`."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None or d < 0 else str(d) for d in dims) + "]"


class AccumulatorState:
    """A dense accumulator: the running sum of one step's fresh gradients and their count.

    `value` holds TF's handle strings ([container, name]): what fetching the Ref shows.
    """

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype, shape, reduction_type: str = "MEAN"):
        self.name = name
        self.dtype = np.dtype(dtype.np_dtype)
        self.shape = shape.as_tuple() if shape is not None else None  # None: unknown rank
        self.mean = reduction_type == "MEAN"
        self.cond = threading.Condition()
        self.global_step = 0
        self.counter = 0
        self.accum = None
        self.torn_down = False
        self.value = np.array([b"", name.encode()], dtype=object)

    def __repr__(self) -> str:
        return f"<{self.kind} '{self.name}' step={self.global_step} count={self.counter}>"

    # -- waiting --------------------------------------------------------------------------
    def _wait(self, ctx, ready) -> None:
        """Waits (holding `cond`) until `ready()`; raises on step deadline or session close."""
        while not ready():
            if self.torn_down:
                raise errors.CancelledError(None, None, f"{self.kind} '{self.name}' was "
                                            "cancelled (its session was closed).")
            left = _SLICE_S
            if ctx is not None:
                ctx.check()
                left = ctx.remaining(_SLICE_S)
            self.cond.wait(max(left, 0.001))

    def close(self) -> None:
        """Session teardown: wakes every waiting take with CancelledError."""
        with self.cond:
            self.torn_down = True
            self.cond.notify_all()

    # -- the operations -------------------------------------------------------------------
    def num_accumulated(self) -> int:
        with self.cond:
            return self.counter

    def set_global_step(self, step: int) -> int:
        """Sets the global step; returns the previous one."""
        with self.cond:
            old, self.global_step = self.global_step, step
            return old

    def apply(self, local_step: int, grad: np.ndarray) -> None:
        """Adds `grad` unless stale. Raises InvalidArgumentError on a shape mismatch."""
        with self.cond:
            self._validate(grad.shape)
            if local_step < self.global_step:
                return
            if self.counter == 0:
                self.accum = np.array(grad, dtype=self.dtype)   # NOTE: a copy, never the input
            else:
                self.accum += grad
            self.counter += 1
            self.cond.notify_all()

    def _validate(self, shape: tuple) -> None:
        if self.counter > 0 and self.accum.shape != shape:
            raise _invalid(f"Shape mismatch: expected {_shape_str(self.accum.shape)}, got "
                           f"{_shape_str(shape)}")
        if not _compatible(self.shape, shape):
            raise _invalid(f"Shape mismatch: expected {_shape_str(self.shape)}, got "
                           f"{_shape_str(shape)}")

    def take(self, ctx, num_required: int):
        """Waits for `num_required` gradients; returns their reduction and starts a new step."""
        with self.cond:
            self._wait(ctx, lambda: self.counter >= num_required)
            self.global_step += 1
            out = self._reduce()
            self.counter, self.accum = 0, None
            return out

    def _reduce(self):
        return _divide(self.accum, self.counter) if self.mean else self.accum


class SparseAccumulatorState(AccumulatorState):
    """A sparse accumulator: (indices, summed values, per-index counts) of one step."""

    kind = "SparseConditionalAccumulator"

    def apply(self, local_step: int, indices, values, shape) -> None:
        """Adds the slices unless stale (`shape`: the gradient's dense shape, or None)."""
        _check_slices(indices, values)
        with self.cond:
            self._validate_sparse(indices, values, shape)
            if local_step < self.global_step:
                return
            if self.counter == 0:
                self.accum = (indices.copy(), np.array(values, dtype=self.dtype),
                              np.ones(len(indices), np.int64))
            else:
                self.accum = _merge(*self.accum, indices, values)
            self.counter += 1
            self.cond.notify_all()

    def _validate_sparse(self, indices, values, shape) -> None:
        known = self.shape if self.shape is not None else ()
        if shape is not None:
            _check_dense_shape(known, shape)
        if known and known[0] is not None and len(indices):
            bad = np.flatnonzero(indices >= known[0])
            if len(bad):
                i = int(bad[0])
                raise _invalid(f"Shape mismatch: index of slice {i} exceeded limits of shape; "
                               f"index is {indices[i]} exceeded {known[0]}")
        if self.counter > 0:
            _check_values(self.accum[1].shape, values.shape, "values")
        else:
            _check_values_against(known, values.shape)

    def _reduce(self):
        indices, values, counts = self.accum
        if self.mean:
            values = _divide(values, counts.reshape((-1,) + (1,) * (values.ndim - 1)))
        dim0 = self.shape[0] if self.shape else None
        shape = np.array([-1 if dim0 is None else dim0, *values.shape[1:]], np.int64)
        return indices, values, shape


# -- helpers --------------------------------------------------------------------------------
def _compatible(want, got) -> bool:
    if want is None:
        return True
    return len(want) == len(got) and all(w is None or w == g for w, g in zip(want, got))


def _divide(total: np.ndarray, count):
    """`total / count` in `total`'s (floating) dtype."""
    return (total / np.asarray(count).astype(total.dtype)).astype(total.dtype, copy=False)


def _check_slices(indices, values) -> None:
    if indices.ndim != 1:
        raise _invalid("Input indices should be vector but received shape: "
                       f"{_shape_str(indices.shape)}")
    if values.ndim == 0:
        raise _invalid("Values cannot be 0-dimensional.")
    if values.shape[0] != indices.shape[0]:
        raise _invalid(f"Expected {indices.shape[0]} non-empty input values, got "
                       f"{values.shape[0]}")


def _check_dense_shape(known: tuple, shape: np.ndarray) -> None:
    if len(known) > len(shape):
        raise _invalid(f"Shape mismatch: expected shape rank at least {len(known)}, got "
                       f"{len(shape)}")
    for i, d in enumerate(known):
        if d is not None and d != shape[i]:
            raise _invalid(f"Shape mismatch: expected shape dim {i} to be {d}, got {shape[i]}")


def _check_values(want: tuple, got: tuple, what: str) -> None:
    if len(want) != len(got):
        raise _invalid(f"Shape mismatch: expected {what} rank {len(want)}, got {len(got)}")
    for i in range(1, len(want)):
        if want[i] != got[i]:
            raise _invalid(f"Shape mismatch: expected {what} dim {i} to be {want[i]}, got "
                           f"{got[i]}")


def _check_values_against(known: tuple, got: tuple) -> None:
    if len(known) > len(got):
        raise _invalid(f"Shape mismatch: expected values rank at least {len(known)}, got "
                       f"{len(got)}")
    for i in range(1, len(known)):
        if known[i] is not None and known[i] != got[i]:
            raise _invalid(f"Shape mismatch: expected values dim {i} to be {known[i]}, got "
                           f"{got[i]}")


def _increasing(a: np.ndarray) -> bool:
    return len(a) < 2 or bool(np.all(a[1:] > a[:-1]))


def _merge(acc_idx, acc_val, acc_cnt, idx, val):
    """TF's merge of accumulated slices with new ones: one pass over both index lists in
    order, equal indices summed and counted (sorted unique lists: their union)."""
    if _increasing(acc_idx) and _increasing(idx):
        out_idx = np.union1d(acc_idx, idx)
        pa, pb = np.searchsorted(out_idx, acc_idx), np.searchsorted(out_idx, idx)
    else:
        out_idx, pa, pb = _merge_positions(acc_idx, idx)
    out_val = np.zeros((len(out_idx),) + acc_val.shape[1:], acc_val.dtype)
    out_val[pa] = acc_val
    out_val[pb] += val
    out_cnt = np.zeros(len(out_idx), np.int64)
    out_cnt[pa] = acc_cnt
    out_cnt[pb] += 1
    return out_idx.astype(np.int64), out_val, out_cnt


def _merge_positions(a: np.ndarray, b: np.ndarray):
    """The merged index list and where each element of `a` and `b` lands in it."""
    out: list[int] = []
    pa: list[int] = []
    pb: list[int] = []
    i = j = 0
    while i < len(a) or j < len(b):
        take_a = j >= len(b) or (i < len(a) and a[i] <= b[j])
        take_b = i >= len(a) or (j < len(b) and b[j] <= a[i])
        if take_a:
            pa.append(len(out))
        if take_b:
            pb.append(len(out))
        out.append(a[i] if take_a else b[j])
        i, j = i + take_a, j + take_b
    return np.array(out, np.int64), np.array(pa, np.int64), np.array(pb, np.int64)


def _scalar(value, what: str):
    value = np.asarray(value)
    if value.ndim != 0:
        raise _invalid(f"Argument {what} must be scalar, but had bad shape "
                       f"{_shape_str(value.shape)}")
    return value.item()


def _num_required(value) -> int:
    n = _scalar(value, "num_required")
    if n < 1:
        raise _invalid(f"Argument num_required must be positive, but was {n}")
    return int(n)


# -- the accumulator ops -----------------------------------------------------------------------
_FLOATS = {np.dtype(np.float16): "DT_HALF", np.dtype(np.float32): "DT_FLOAT",
           np.dtype(np.float64): "DT_DOUBLE"}


def _check_kernel_dtype(node) -> None:
    """As TF, accumulator kernels exist for half, float and double only."""
    dt = node.attr("dtype")
    if np.dtype(dt.np_dtype) not in _FLOATS:
        raise _invalid(
            f"No OpKernel was registered to support Op '{node.op}' used by {{{{node "
            f"{node.name}}}}} with these attrs: [dtype=DT_{dt.name.upper()}]\nRegistered "
            "kernels:\n  device='CPU'; dtype in [DT_DOUBLE]\n  device='CPU'; dtype in "
            "[DT_FLOAT]\n  device='CPU'; dtype in [DT_HALF]")


def _accumulator_factory(cls):
    def factory(node):
        _check_kernel_dtype(node)
        shared = node.attr("shared_name") or ""
        key = shared or f"_accumulator/{node.name}"

        def create():
            return cls(shared or node.name, node.attr("dtype"), node.attr("shape"),
                       node.attr("reduction_type") or "MEAN")
        if node.resources is None:
            acc = create()
        else:
            acc = node.resources.lookup_or_create(node.attr("container") or "", key, create)
        if type(acc) is not cls:
            raise _invalid(f"Resource '{key}' is not a {cls.kind}")
        if acc.dtype != node.attr("dtype").np_dtype:
            raise _invalid(f"Shared accumulator '{key}' has dtype {acc.dtype}, but node "
                           f"'{node.name}' wants {node.attr('dtype').name}")
        return lambda: acc
    return factory


for _op in ("ConditionalAccumulator", "ResourceConditionalAccumulator"):
    register_kernel(_op)(_accumulator_factory(AccumulatorState))
register_kernel("SparseConditionalAccumulator")(_accumulator_factory(SparseAccumulatorState))


def _apply_gradient(node):
    def run(acc, local_step, grad):
        acc.apply(_scalar(local_step, "local_step"), np.asarray(grad))
    return run


def _take_gradient(node):
    def run(ctx, acc, num_required):
        return acc.take(ctx, _num_required(num_required))
    return run


def _num_accumulated(node):
    return lambda acc: np.int32(acc.num_accumulated())


def _set_global_step(node):
    def run(acc, new_global_step):
        step = int(_scalar(new_global_step, "new_global_step"))
        old = acc.set_global_step(step)
        if step < old:
            _LOG.warning("Attempt to set current_global_step_ to smaller value: "
                         "current_global_step_ = %d >= %d = new_global_step.", old, step)
    return run


for _prefix in ("", "Resource"):
    register_kernel(f"{_prefix}AccumulatorApplyGradient")(_apply_gradient)
    register_kernel(f"{_prefix}AccumulatorTakeGradient", context=True)(_take_gradient)
    register_kernel(f"{_prefix}AccumulatorNumAccumulated")(_num_accumulated)
    register_kernel(f"{_prefix}AccumulatorSetGlobalStep")(_set_global_step)


@register_kernel("SparseAccumulatorApplyGradient")
def _sparse_apply_gradient(node):
    known = bool(node.attr("has_known_shape"))

    def run(acc, local_step, indices, values, shape):
        shape = np.asarray(shape, np.int64).reshape(-1) if known else None
        acc.apply(_scalar(local_step, "local_step"), np.asarray(indices, np.int64),
                  np.asarray(values), shape)
    return run


register_kernel("SparseAccumulatorTakeGradient", context=True)(_take_gradient)
