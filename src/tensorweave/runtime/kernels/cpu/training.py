"""CPU kernels of the training ops: fused optimizer updates, in place, TF's formulas exactly.

Every kernel holds its variable's `ref.lock` (whatever `use_locking` says: numpy updates are not
atomic), validates as TF's kernels do (same messages), updates the variable and its slots in
place with `out=` numpy calls and returns the variable's Ref. Scalars (lr, beta1, ...) arrive as
0-d arrays of the op's dtype T and stay numpy scalars of T, so float32 variables are never
promoted to float64. Temporaries come from a per-kernel `_Scratch`, only used under the lock.

Sparse kernels (`SparseApply*`) gather the named rows, run the update on them and scatter them
back; with duplicate indices each row gets its updates in index order, as from TF's
sequential loop (in waves of distinct rows).
Formulas follow tensorflow/core/kernels/training_ops.cc (the sparse variants have their own
operation order, kept here). Complex dtypes are supported like TF's CPU kernels; integer
dtypes have no kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.runtime.kernels.cpu import native, parallel
from tensorweave.runtime.kernels.registry import register_kernel


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


class _Scratch:
    """Reusable temporaries of one kernel thread (callers hold the variable's lock): views
    of flat buffers that only grow, so blocks of varying size share them."""

    __slots__ = ("_bufs", "_flat")

    def __init__(self):
        self._bufs: dict[int, np.ndarray] = {}
        self._flat: dict[int, np.ndarray] = {}

    def get(self, i: int, like: np.ndarray) -> np.ndarray:
        buf = self._bufs.get(i)
        if buf is None or buf.shape != like.shape or buf.dtype != like.dtype:
            flat = self._flat.get(i)
            if flat is None or flat.size < like.size or flat.dtype != like.dtype:
                flat = self._flat[i] = np.empty(like.size, like.dtype)
            buf = self._bufs[i] = flat[:like.size].reshape(like.shape)
        return buf


class _Scratches:
    """One `_Scratch` per thread index of `parallel.for_blocks`."""

    __slots__ = ("_all",)

    def __init__(self):
        self._all: list[_Scratch] = []

    def __getitem__(self, w: int) -> _Scratch:
        while len(self._all) <= w:
            self._all.append(_Scratch())
        return self._all[w]


# -- update formulas: fn(arrays, scalars, grad, scratch, flags); arrays[0] is var ------------
def _gradient_descent(b, s, g, t, f) -> None:
    var, = b
    tmp = t.get(0, var)
    np.multiply(g, s[0], out=tmp)
    var -= tmp


def _momentum(b, s, g, t, f) -> None:
    var, accum = b
    lr, momentum = s
    accum *= momentum
    accum += g
    tmp = t.get(0, var)
    if f["use_nesterov"]:
        np.multiply(g, lr, out=tmp)
        tmp2 = t.get(1, var)
        np.multiply(accum, momentum, out=tmp2)
        tmp2 *= lr
        tmp += tmp2
    else:
        np.multiply(accum, lr, out=tmp)
    var -= tmp


def _sparse_momentum(b, s, g, t, f) -> None:
    var, accum = b
    lr, momentum = s
    accum *= momentum
    accum += g
    tmp = t.get(0, var)
    if f["use_nesterov"]:
        np.multiply(g, lr, out=tmp)
        tmp2 = t.get(1, var)
        np.multiply(accum, lr * momentum, out=tmp2)
        tmp += tmp2
    else:
        np.multiply(accum, lr, out=tmp)
    var -= tmp


def _adam_scalars(s: tuple) -> tuple:
    """(alpha, 1-beta1, 1-beta2, beta1, epsilon) with alpha = lr*sqrt(1-beta2^t)/(1-beta1^t)."""
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = s
    one = type(lr)(1)
    alpha = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
    return alpha, one - beta1, one - beta2, beta1, epsilon


def _adam(b, s, g, t, f) -> None:
    """m += (g-m)(1-beta1); v += (g²-v)(1-beta2); var -= alpha*m/(sqrt(v)+eps)
    (Nesterov: alpha*(g(1-beta1)+beta1*m)/(sqrt(v)+eps)); `s` from `_adam_scalars`."""
    var, m, v = b
    alpha, one_minus_beta1, one_minus_beta2, beta1, epsilon = s
    if native.usable(var, m, v, g) and all(isinstance(x, np.float32) for x in s):
        native.adam(var, m, v, g, *s, f["use_nesterov"])   # the same steps in one pass
        return
    tmp = t.get(0, var)
    np.subtract(g, m, out=tmp)
    tmp *= one_minus_beta1
    m += tmp
    np.multiply(g, g, out=tmp)
    tmp -= v
    tmp *= one_minus_beta2
    v += tmp
    if f["use_nesterov"]:
        np.multiply(g, one_minus_beta1, out=tmp)
        tmp2 = t.get(2, var)
        np.multiply(m, beta1, out=tmp2)
        tmp += tmp2
        tmp *= alpha
    else:
        np.multiply(m, alpha, out=tmp)
    den = t.get(1, var)
    np.sqrt(v, out=den)
    den += epsilon
    tmp /= den
    var -= tmp


def _rms_prop(b, s, g, t, f) -> None:
    """ms += (g²-ms)(1-rho); mom = mom*momentum + g*lr/sqrt(ms+eps); var -= mom."""
    var, ms, mom = b
    lr, rho, momentum, epsilon = s
    tmp = t.get(0, var)
    np.multiply(g, g, out=tmp)
    tmp -= ms
    tmp *= type(rho)(1) - rho
    ms += tmp
    den = t.get(1, var)
    np.add(ms, epsilon, out=den)
    np.sqrt(den, out=den)
    np.multiply(g, lr, out=tmp)
    tmp /= den
    mom *= momentum
    mom += tmp
    var -= mom


def _centered_rms_prop(b, s, g, t, f) -> None:
    """As RMSProp with mg += (g-mg)(1-rho) and denominator sqrt(ms - mg² + eps)."""
    var, mg, ms, mom = b
    lr, rho, momentum, epsilon = s
    one_minus_rho = type(rho)(1) - rho
    tmp = t.get(0, var)
    np.multiply(g, g, out=tmp)
    tmp -= ms
    tmp *= one_minus_rho
    ms += tmp
    np.subtract(g, mg, out=tmp)
    tmp *= one_minus_rho
    mg += tmp
    den = t.get(1, var)
    np.multiply(mg, mg, out=den)
    np.subtract(ms, den, out=den)
    den += epsilon
    np.sqrt(den, out=den)
    np.multiply(g, lr, out=tmp)
    tmp /= den
    mom *= momentum
    mom += tmp
    var -= mom


def _sparse_rms_prop(b, s, g, t, f) -> None:
    """TF's sparse order: ms = ms*rho + g²(1-rho); mom = mom*momentum + rsqrt(ms+eps)*lr*g."""
    var, ms, mom = b
    lr, rho, momentum, epsilon = s
    tmp = t.get(0, var)
    ms *= rho
    np.multiply(g, g, out=tmp)
    tmp *= type(rho)(1) - rho
    ms += tmp
    _rsqrt_lr_g(np.add(ms, epsilon, out=tmp), lr, g)
    mom *= momentum
    mom += tmp
    var -= mom


def _sparse_centered_rms_prop(b, s, g, t, f) -> None:
    """TF's sparse order, with mg = mg*rho + g(1-rho) and rsqrt(ms + eps - mg²)."""
    var, mg, ms, mom = b
    lr, rho, momentum, epsilon = s
    one_minus_rho = type(rho)(1) - rho
    tmp = t.get(0, var)
    ms *= rho
    np.multiply(g, g, out=tmp)
    tmp *= one_minus_rho
    ms += tmp
    mg *= rho
    np.multiply(g, one_minus_rho, out=tmp)
    mg += tmp
    den = t.get(1, var)
    np.multiply(mg, mg, out=den)
    np.add(ms, epsilon, out=tmp)
    tmp -= den
    _rsqrt_lr_g(tmp, lr, g)
    mom *= momentum
    mom += tmp
    var -= mom


def _rsqrt_lr_g(x, lr, g) -> None:
    """x = rsqrt(x) * lr * g, in place."""
    np.sqrt(x, out=x)
    np.reciprocal(x, out=x)
    x *= lr
    x *= g


def _adagrad(b, s, g, t, f) -> None:
    """accum += g² (when update_slots); var -= lr * g * rsqrt(accum)."""
    var, accum = b
    lr, = s
    tmp = t.get(0, var)
    if f["update_slots"]:
        np.multiply(g, g, out=tmp)
        accum += tmp
    np.multiply(g, lr, out=tmp)
    r = t.get(1, var)
    np.sqrt(accum, out=r)
    np.reciprocal(r, out=r)
    tmp *= r
    var -= tmp


def _adadelta(b, s, g, t, f) -> None:
    """accum = accum*rho + g²(1-rho); u = sqrt(accum_update+eps)*rsqrt(accum+eps)*g;
    var -= u*lr; accum_update = accum_update*rho + u²(1-rho)."""
    var, accum, accum_update = b
    lr, rho, epsilon = s
    one_minus_rho = type(rho)(1) - rho
    tmp = t.get(0, var)
    accum *= rho
    np.multiply(g, g, out=tmp)
    tmp *= one_minus_rho
    accum += tmp
    update = t.get(1, var)
    np.add(accum_update, epsilon, out=update)
    np.sqrt(update, out=update)
    np.add(accum, epsilon, out=tmp)
    np.sqrt(tmp, out=tmp)
    np.reciprocal(tmp, out=tmp)
    update *= tmp
    update *= g
    np.multiply(update, lr, out=tmp)
    var -= tmp
    accum_update *= rho
    update *= update
    update *= one_minus_rho
    accum_update += update


# -- validation ------------------------------------------------------------------------------
def _read(refs) -> list:
    out = []
    for ref in refs:
        if ref.value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized variables: {ref.name}")
        out.append(ref.value)
    return out


def _scalars(names, values) -> tuple:
    out = []
    for name, v in zip(names, values):
        a = np.asarray(v)
        if a.ndim != 0:
            raise _invalid(f"{name} is not a scalar: {_fmt(a.shape)}")
        out.append(a[()])
    return tuple(out)


def _same_shapes(names, arrays, grad, sparse: bool) -> None:
    var = arrays[0]
    for name, a in zip(names[1:], arrays[1:]):
        if a.shape != var.shape:
            raise _invalid(f"var and {name} do not have the same shape"
                           f"{_fmt(var.shape)} {_fmt(a.shape)}")
    if not sparse and np.shape(grad) != var.shape:
        raise _invalid(f"var and grad do not have the same shape"
                       f"{_fmt(var.shape)} {_fmt(np.shape(grad))}")


def _sparse_checks(var, grad, indices) -> None:
    if var.ndim < 1:
        raise _invalid("var must be at least 1 dimensional")
    if indices.ndim != 1:
        raise _invalid("indices must be one-dimensional")
    if grad.ndim != var.ndim:
        raise _invalid(f"var and grad must match in dimension {max(1, min(var.ndim, grad.ndim))}")
    for d in range(1, var.ndim):
        if var.shape[d] != grad.shape[d]:
            raise _invalid(f"var and grad must match in dimension {d}")
    if grad.shape[0] != indices.shape[0]:
        raise _invalid("grad must be the same size as indices in the first dimension.")
    bad = np.flatnonzero((indices < 0) | (indices >= var.shape[0]))
    if bad.size:
        i = int(bad[0])
        raise _invalid(f"Index {int(indices[i])} at offset {i} in indices is out of range")


# -- kernel factories ------------------------------------------------------------------------
_FLOATING = ("f", "c")


def _check_dtype(node, op: str) -> None:
    dt = node.attr("T")
    if dt is not None and np.dtype(dtypes.as_dtype(dt).np_dtype).kind not in _FLOATING:
        raise errors.UnimplementedError(
            None, None, f"No '{op}' kernel for dtype {dtypes.as_dtype(dt).name}: TF registers "
                        "training kernels for floating and complex types only")


def _ftrl(b, s, g, t, f) -> None:
    """FTRL-proximal: accum' = accum + g²; linear += g' - (accum'^-p - accum^-p)/lr * var;
    var = (sign(linear) l1 - linear) / (accum'^-p / lr + 2 l2) where |linear| > l1, else 0
    (V2: g' = g + 2 l2_shrinkage var; multiply_linear_by_lr scales linear and l1 by lr)."""
    var, accum, linear = b
    if len(s) == 5:
        lr, l1, l2, shrinkage, lr_power = s
        g_shrunk = g + 2 * shrinkage * var
    else:
        lr, l1, l2, lr_power = s
        g_shrunk = g
    new_accum = accum + g * g
    step = np.power(new_accum, -lr_power) - np.power(accum, -lr_power)
    if f.get("multiply_linear_by_lr"):
        linear += g_shrunk * lr - step * var
        quadratic = np.power(new_accum, -lr_power) + 2 * l2 * lr
        l1 = l1 * lr
    else:
        linear += g_shrunk - step / lr * var
        quadratic = np.power(new_accum, -lr_power) / lr + 2 * l2
    var[...] = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0)
    accum[...] = new_accum


def _proximal(var, g, lr_eff, l1, l2) -> None:
    """var = sign(v) max(|v| - lr l1, 0) / (1 + lr l2) with v = var - lr g."""
    prox = var - g * lr_eff
    if l1 > 0:
        prox = np.sign(prox) * np.maximum(np.abs(prox) - lr_eff * l1, 0)
    var[...] = prox / (1 + lr_eff * l2)


def _proximal_adagrad(b, s, g, t, f) -> None:
    var, accum = b
    lr, l1, l2 = s
    accum += g * g
    _proximal(var, g, lr / np.sqrt(accum), l1, l2)


def _proximal_gradient_descent(b, s, g, t, f) -> None:
    alpha, l1, l2 = s
    _proximal(b[0], g, alpha, l1, l2)


def _dense(op: str, refs: tuple, scalars: tuple, fn: Callable, after: tuple = (),
           flags: tuple = (), prep: Callable | None = None) -> None:
    """Registers `op` with inputs refs..., scalars..., grad, after... (scalars too); `prep`
    turns the scalars into what `fn` takes, once per step."""
    n, k = len(refs), len(scalars)

    def factory(node):
        _check_dtype(node, op)
        f = {name: node.attr(name) for name in flags}
        scratch = _Scratches()

        def run(*inputs):
            rs, grad = inputs[:n], np.asarray(inputs[n + k])
            with rs[0].lock:
                arrays = _read(rs)
                s = _scalars(scalars + after, inputs[n:n + k] + inputs[n + k + 1:])
                _same_shapes(refs, arrays, grad, sparse=False)
                _update_blocks(fn, arrays, prep(s) if prep else s, grad, scratch, f)
            return rs[0]

        return run

    register_kernel(op)(factory)


def _update_blocks(fn, arrays, s, grad, scratch: _Scratches, f) -> None:
    """Runs the elementwise update `fn` over cache-sized blocks of the flattened arrays, on
    several threads when they are big (`parallel.for_blocks`); small or non-contiguous
    arrays take one plain call. Elementwise, so the result is the same bit for bit."""
    if grad.size <= parallel.BLOCK:
        fn(arrays, s, grad, scratch[0], f)
        return
    flats = [parallel.flat(a) for a in arrays]
    g = parallel.flat(grad)
    if g is None or any(a is None for a in flats):
        fn(arrays, s, grad, scratch[0], f)
        return

    def block(w: int, lo: int, hi: int) -> None:
        fn([a[lo:hi] for a in flats], s, g[lo:hi], scratch[w], f)

    parallel.for_blocks(g.size, block)


def _sparse(op: str, refs: tuple, scalars: tuple, fn: Callable, after: tuple = (),
            flags: tuple = ()) -> None:
    """Registers `op` with inputs refs..., scalars..., grad, indices, after..."""
    n, k = len(refs), len(scalars)

    def factory(node):
        _check_dtype(node, op)
        f = {name: node.attr(name) for name in flags}
        scratch = _Scratch()

        def run(*inputs):
            rs = inputs[:n]
            grad, indices = np.asarray(inputs[n + k]), np.asarray(inputs[n + k + 1])
            with rs[0].lock:
                arrays = _read(rs)
                s = _scalars(scalars + after, inputs[n:n + k] + inputs[n + k + 2:])
                _same_shapes(refs, arrays, grad, sparse=True)
                _sparse_checks(arrays[0], grad, indices)
                _update_rows(fn, arrays, s, grad, indices, scratch, f)
            return rs[0]

        return run

    register_kernel(op)(factory)


def _update_rows(fn, arrays, s, grad, indices, scratch, f) -> None:
    """Applies `fn` to rows `indices` of every array, as TF's sequential loop does when
    indices repeat: in waves of distinct rows (each row's first occurrence, then its
    second, ...), so each row sees its updates in index order and rows stay independent."""
    for wave in _waves(indices.reshape(-1)):
        at = indices[wave]
        rows = [a[at] for a in arrays]
        fn(rows, s, grad[wave], scratch, f)
        for a, r in zip(arrays, rows):
            a[at] = r


def _waves(indices: np.ndarray) -> list:
    """Positions of `indices` grouped by occurrence rank: [all first occurrences, all second
    occurrences, ...], each group in index order; one slice when all are distinct."""
    n = indices.size
    if n == 0:
        return []
    order = np.argsort(indices, kind="stable")
    ordered = indices[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    if starts.size == n:
        return [slice(None)]
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    return [np.sort(order[rank == r]) for r in range(int(rank.max()) + 1)]


_dense("ApplyGradientDescent", ("var",), ("alpha",), _gradient_descent)
_dense("ApplyMomentum", ("var", "accum"), ("lr",), _momentum, ("momentum",),
       ("use_nesterov",))
_sparse("SparseApplyMomentum", ("var", "accum"), ("lr",), _sparse_momentum, ("momentum",),
        ("use_nesterov",))
_dense("ApplyAdam", ("var", "m", "v"),
       ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"), _adam,
       flags=("use_nesterov",), prep=_adam_scalars)
_dense("ApplyRMSProp", ("var", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"), _rms_prop)
_sparse("SparseApplyRMSProp", ("var", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"),
        _sparse_rms_prop)
_dense("ApplyCenteredRMSProp", ("var", "mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"),
       _centered_rms_prop)
_sparse("SparseApplyCenteredRMSProp", ("var", "mg", "ms", "mom"),
        ("lr", "rho", "momentum", "epsilon"), _sparse_centered_rms_prop)
_dense("ApplyAdagrad", ("var", "accum"), ("lr",), _adagrad, flags=("update_slots",))
_sparse("SparseApplyAdagrad", ("var", "accum"), ("lr",), _adagrad, flags=("update_slots",))
_dense("ApplyAdadelta", ("var", "accum", "accum_update"), ("lr", "rho", "epsilon"), _adadelta)
_sparse("SparseApplyAdadelta", ("var", "accum", "accum_update"), ("lr", "rho", "epsilon"),
        _adadelta)
for _sp in (False, True):
    _reg, _pre = (_sparse, "SparseApply") if _sp else (_dense, "Apply")
    _reg(f"{_pre}Ftrl", ("var", "accum", "linear"), (), _ftrl, ("lr", "l1", "l2", "lr_power"),
         ("multiply_linear_by_lr",))
    _reg(f"{_pre}FtrlV2", ("var", "accum", "linear"), (), _ftrl,
         ("lr", "l1", "l2", "l2_shrinkage", "lr_power"), ("multiply_linear_by_lr",))
    _reg(f"{_pre}ProximalAdagrad", ("var", "accum"), ("lr", "l1", "l2"), _proximal_adagrad)
    _reg(f"{_pre}ProximalGradientDescent", ("var",), ("alpha", "l1", "l2"),
         _proximal_gradient_descent)
