"""Lowerings of state ops: variables, assignment, scatter updates and the training ops.

A variable on an XLA device keeps its value on the device as a jax array in its `Ref` (the
same resource-container lookup as the CPU kernel, so every plan of a session shares it). The
partition's executable passes each variable it touches into the compiled function and gets
its updated value back (the input buffer is donated), so a whole training step is one
executable. Inside the trace a ref input is a `VarState` (see lower.py): updates read it and
write a new value, in the node order of the partition.

Formulas follow tensorflow/core/kernels/training_ops.cc, as the CPU kernels (cpu/training.py)
do, including the sparse variants' own operation order. Sparse updates apply the rows one at
a time (a `lax.fori_loop`), as TF's sequential loop does, so duplicate indices give TF's result.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering, share_cpu_kernel

for _op in ("VariableV2", "Variable"):
    share_cpu_kernel(_op)


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


@register_lowering("IsVariableInitialized")
def _is_initialized(node):
    return lambda state: np.asarray(state.value is not None)


@register_lowering("Assign", writes_state=True)
def _assign(node):
    validate = bool(node.attr("validate_shape"))
    dt = np.dtype(node.attr("T").np_dtype)
    _, jnp, _ = jax_modules()

    def run(state, value):
        old = state.value
        if validate and old is not None and tuple(old.shape) != tuple(value.shape):
            raise _invalid("Assign requires shapes of both tensors to match. lhs shape= "
                           f"{_fmt(old.shape)} rhs shape= {_fmt(value.shape)}")
        # NOTE: a host value stays one (an initializer folded while tracing): the executable
        # then sets it on the host instead of compiling a fill kernel for it
        state.write(np.asarray(value, dt) if isinstance(value, (np.ndarray, np.generic))
                    else jnp.asarray(value, dt))
        return state

    return run


def _dense_update(name: str):
    def factory(node):
        _, jnp, _ = jax_modules()

        def run(state, value):
            params = state.read()
            if tuple(params.shape) != tuple(np.shape(value)):
                raise _invalid("Parameters and update must be the same size: lhs shape= "
                               f"{_fmt(params.shape)} rhs shape= {_fmt(np.shape(value))}")
            state.write(getattr(jnp, name)(params, value).astype(params.dtype))
            return state

        return run

    return factory


register_lowering("AssignAdd", writes_state=True)(_dense_update("add"))
register_lowering("AssignSub", writes_state=True)(_dense_update("subtract"))


def _scatter(kind: str):
    def factory(node):
        def run(state, indices, updates):
            params = state.read()
            if params.ndim == 0:
                raise _invalid("params must be at least 1-D, got shape []")
            want = tuple(np.shape(indices)) + tuple(params.shape[1:])
            if np.ndim(updates) and tuple(np.shape(updates)) != want:
                raise _invalid(f"Must have updates.shape = indices.shape + params.shape[1:] or "
                               f"updates.shape = [], got updates.shape "
                               f"{_fmt(np.shape(updates))}, indices.shape "
                               f"{_fmt(np.shape(indices))}, params.shape {_fmt(params.shape)}")
            # NOTE: out-of-range indices are dropped (XLA's scatter), not an error as on CPU
            at = params.at[indices]
            new = at.add(-updates) if kind == "sub" else getattr(at, kind)(updates)
            state.write(new.astype(params.dtype))
            return state

        return run

    return factory


for _op, _kind in (("ScatterUpdate", "set"), ("ScatterAdd", "add"), ("ScatterSub", "sub"),
                   ("ScatterMin", "min"), ("ScatterMax", "max"), ("ScatterMul", "multiply")):
    register_lowering(_op, writes_state=True)(_scatter(_kind))


# -- update formulas: fn(jnp, arrays, scalars, grad, flags) -> new arrays; arrays[0] is var --
def _gradient_descent(jnp, b, s, g, f):
    return (b[0] - g * s[0],)


def _momentum(jnp, b, s, g, f):
    var, accum = b
    lr, momentum = s
    accum = accum * momentum + g
    if f["use_nesterov"]:
        return var - (g * lr + accum * momentum * lr), accum
    return var - accum * lr, accum


def _sparse_momentum(jnp, b, s, g, f):
    var, accum = b
    lr, momentum = s
    accum = accum * momentum + g
    if f["use_nesterov"]:
        return var - (g * lr + accum * (lr * momentum)), accum
    return var - accum * lr, accum


def _adam(jnp, b, s, g, f):
    var, m, v = b
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = s
    alpha = lr * jnp.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m + (g - m) * (1 - beta1)
    v = v + (g * g - v) * (1 - beta2)
    step = (g * (1 - beta1) + beta1 * m) if f["use_nesterov"] else m
    return var - step * alpha / (jnp.sqrt(v) + epsilon), m, v


def _rms_prop(jnp, b, s, g, f):
    var, ms, mom = b
    lr, rho, momentum, epsilon = s
    ms = ms + (g * g - ms) * (1 - rho)
    mom = mom * momentum + g * lr / jnp.sqrt(ms + epsilon)
    return var - mom, ms, mom


def _sparse_rms_prop(jnp, b, s, g, f):
    var, ms, mom = b
    lr, rho, momentum, epsilon = s
    ms = ms * rho + g * g * (1 - rho)
    mom = mom * momentum + (1 / jnp.sqrt(ms + epsilon)) * lr * g
    return var - mom, ms, mom


def _centered_rms_prop(jnp, b, s, g, f):
    var, mg, ms, mom = b
    lr, rho, momentum, epsilon = s
    ms = ms + (g * g - ms) * (1 - rho)
    mg = mg + (g - mg) * (1 - rho)
    mom = mom * momentum + g * lr / jnp.sqrt(ms - mg * mg + epsilon)
    return var - mom, mg, ms, mom


def _adagrad(jnp, b, s, g, f):
    var, accum = b
    lr, = s
    if f["update_slots"]:
        accum = accum + g * g
    return var - g * lr * (1 / jnp.sqrt(accum)), accum


def _adadelta(jnp, b, s, g, f):
    var, accum, accum_update = b
    lr, rho, epsilon = s
    accum = accum * rho + g * g * (1 - rho)
    update = jnp.sqrt(accum_update + epsilon) * (1 / jnp.sqrt(accum + epsilon)) * g
    accum_update = accum_update * rho + update * update * (1 - rho)
    return var - update * lr, accum, accum_update


def _scalars(names, values) -> tuple:
    for name, v in zip(names, values):
        if np.ndim(v) != 0:
            raise _invalid(f"{name} is not a scalar: {_fmt(np.shape(v))}")
    return tuple(values)


def _same_shapes(names, arrays, grad, sparse: bool) -> None:
    var = arrays[0]
    for name, a in zip(names[1:], arrays[1:]):
        if tuple(a.shape) != tuple(var.shape):
            raise _invalid(f"var and {name} do not have the same shape"
                           f"{_fmt(var.shape)} {_fmt(a.shape)}")
    if not sparse and tuple(grad.shape) != tuple(var.shape):
        raise _invalid(f"var and grad do not have the same shape{_fmt(var.shape)} "
                       f"{_fmt(grad.shape)}")


def _dense(op: str, refs: tuple, scalars: tuple, fn, after: tuple = (), flags: tuple = ()):
    """Registers `op` with inputs refs..., scalars..., grad, after... (as cpu/training.py)."""
    n, k = len(refs), len(scalars)

    def factory(node):
        _, jnp, _ = jax_modules()
        f = {name: node.attr(name) for name in flags}

        def run(*inputs):
            states, grad = inputs[:n], inputs[n + k]
            arrays = [st.read() for st in states]
            s = _scalars(scalars + after, inputs[n:n + k] + inputs[n + k + 1:])
            _same_shapes(refs, arrays, grad, sparse=False)
            for st, new in zip(states, fn(jnp, arrays, s, grad, f)):
                st.write(new.astype(st.value.dtype))
            return states[0]

        return run

    register_lowering(op, writes_state=True)(factory)


def _sparse(op: str, refs: tuple, scalars: tuple, fn, after: tuple = (), flags: tuple = ()):
    """Registers `op` with inputs refs..., scalars..., grad, indices, after...: the rows
    `indices` are updated one after another."""
    n, k = len(refs), len(scalars)

    def factory(node):
        _, jnp, lax = jax_modules()
        f = {name: node.attr(name) for name in flags}

        def run(*inputs):
            states = inputs[:n]
            grad, indices = inputs[n + k], inputs[n + k + 1]
            arrays = [st.read() for st in states]
            s = _scalars(scalars + after, inputs[n:n + k] + inputs[n + k + 2:])
            _same_shapes(refs, arrays, grad, sparse=True)
            if np.ndim(indices) != 1 or tuple(grad.shape[1:]) != tuple(arrays[0].shape[1:]) \
                    or grad.shape[0] != np.shape(indices)[0]:
                raise _invalid(f"grad must be the same shape as var except for the first "
                               f"dimension, and indices a vector of its first dimension: "
                               f"var {_fmt(arrays[0].shape)} grad {_fmt(grad.shape)} "
                               f"indices {_fmt(np.shape(indices))}")

            idx, g = jnp.asarray(indices), jnp.asarray(grad)

            def row(i, bufs):
                j = idx[i]
                rows = [lax.dynamic_index_in_dim(a, j, keepdims=False) for a in bufs]
                new = fn(jnp, rows, s, g[i], f)
                return tuple(lax.dynamic_update_index_in_dim(a, r.astype(a.dtype), j, 0)
                             for a, r in zip(bufs, new))

            out = lax.fori_loop(0, grad.shape[0], row, tuple(arrays))
            for st, new in zip(states, out):
                st.write(new)
            return states[0]

        return run

    register_lowering(op, writes_state=True)(factory)


_dense("ApplyGradientDescent", ("var",), ("alpha",), _gradient_descent)
_dense("ApplyMomentum", ("var", "accum"), ("lr",), _momentum, ("momentum",), ("use_nesterov",))
_sparse("SparseApplyMomentum", ("var", "accum"), ("lr",), _sparse_momentum, ("momentum",),
        ("use_nesterov",))
_dense("ApplyAdam", ("var", "m", "v"),
       ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"), _adam,
       flags=("use_nesterov",))
_dense("ApplyRMSProp", ("var", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"), _rms_prop)
_sparse("SparseApplyRMSProp", ("var", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"),
        _sparse_rms_prop)
_dense("ApplyCenteredRMSProp", ("var", "mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"),
       _centered_rms_prop)
_dense("ApplyAdagrad", ("var", "accum"), ("lr",), _adagrad, flags=("update_slots",))
_sparse("SparseApplyAdagrad", ("var", "accum"), ("lr",), _adagrad, flags=("update_slots",))
_dense("ApplyAdadelta", ("var", "accum", "accum_update"), ("lr", "rho", "epsilon"), _adadelta)
