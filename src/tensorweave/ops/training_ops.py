"""Training ops: the fused optimizer updates (`ApplyAdam`, `SparseApplyMomentum`, ...).

Op types, input order, attrs and defaults are TensorFlow's (core/ops/training_ops.cc), so
GraphDefs written by TF1 optimizers run here. Every op takes its variable and slots as
`Ref(T)` inputs, updates them in place and outputs the variable's ref (`out`). Sparse variants
update only the rows named by `indices` (int32 or int64); TF has no SparseApplyGradientDescent
(optimizers use `ScatterSub`). Kernels: `runtime/kernels/cpu/training.py`.

The Python wrappers below mirror TF's generated `gen_training_ops` functions; they are used by
the optimizers and are not part of the public `tf.*` namespace.
"""

from __future__ import annotations

from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.ops.state_ops import merge_shapes
from tensorweave.shapes import TensorShape


# -- shape functions (TF's ApplyGradientDescentShapeFn & co.) ----------------------------------
def _with_rank(ctx, i: int, rank: int) -> None:
    shape = ctx.input_shape(i)
    if shape.ndims is not None and shape.ndims != rank:
        raise ctx.fail(f"Shape must be rank {rank} but is rank {shape.ndims}")


def _merge_dim(ctx, a, b) -> None:
    if a is not None and b is not None and a != b:
        raise ctx.fail(f"Dimensions must be equal, but are {a} and {b}")


def _grad_and_indices(ctx, s: TensorShape, grad: int, sparse: bool) -> TensorShape:
    """Dense: grad merges with the var shape. Sparse: indices is a vector as long as grad's
    first dimension, and grad's trailing dimensions merge with the var's."""
    g = ctx.input_shape(grad)
    if not sparse:
        return merge_shapes(ctx, s, g)
    _with_rank(ctx, grad + 1, 1)
    indices = ctx.input_dims(grad + 1)
    g_dims = g.as_tuple()
    if g_dims is None:
        return s
    if not g_dims:
        raise ctx.fail("Shape must be at least rank 1 but is rank 0")
    _merge_dim(ctx, indices[0] if indices else None, g_dims[0])
    return merge_shapes(ctx, s, TensorShape((None,) + tuple(g_dims[1:])))


def _apply_shape(n_refs: int, scalars: tuple, grad: int, sparse: bool = False):
    """Shape fn: refs 0..n_refs-1 share a shape, `scalars` are rank 0, then grad (+indices)."""

    def fn(ctx) -> TensorShape:
        s = ctx.input_shape(0)
        for i in range(1, n_refs):
            s = merge_shapes(ctx, s, ctx.input_shape(i))
        for i in scalars:
            _with_rank(ctx, i, 0)
        return _grad_and_indices(ctx, s, grad, sparse)

    return fn


# -- registrations -----------------------------------------------------------------------------
_T = "T: numbertype"
_LOCK = "use_locking: bool = false"
_IDX = "indices: Tindices"
_TIDX = "Tindices: {int32, int64}"


def _register(name, refs, scalars_before, scalars_after=(), extra_attrs=(), sparse=False):
    """Declares `name` with inputs refs..., scalars_before..., grad, [indices], scalars_after."""
    inputs = [f"{r}: Ref(T)" for r in refs] + [f"{s}: T" for s in scalars_before] + ["grad: T"]
    if sparse:
        inputs.append(_IDX)
    inputs += [f"{s}: T" for s in scalars_after]
    n_refs = len(refs)
    grad = n_refs + len(scalars_before)
    first_after = grad + (2 if sparse else 1)
    scalars = tuple(range(n_refs, grad)) + tuple(
        range(first_after, first_after + len(scalars_after)))
    attrs = [_T] + ([_TIDX] if sparse else []) + [_LOCK] + list(extra_attrs)
    register_op(name, inputs=inputs, outputs=["out: Ref(T)"], attrs=attrs,
                shape_fn=_apply_shape(n_refs, scalars, grad, sparse))


register_op("ApplyGradientDescent", inputs=["var: Ref(T)", "alpha: T", "delta: T"],
            outputs=["out: Ref(T)"], attrs=[_T, _LOCK], shape_fn=_apply_shape(1, (1,), 2))
_NESTEROV = ["use_nesterov: bool = false"]
_UPDATE_SLOTS = ["update_slots: bool = true"]
for _sparse in (False, True):
    _prefix = "SparseApply" if _sparse else "Apply"
    _register(f"{_prefix}Momentum", ["var", "accum"], ["lr"], ["momentum"], _NESTEROV, _sparse)
    _register(f"{_prefix}Adagrad", ["var", "accum"], ["lr"], (), _UPDATE_SLOTS, _sparse)
    _register(f"{_prefix}RMSProp", ["var", "ms", "mom"], ["lr", "rho", "momentum", "epsilon"],
              sparse=_sparse)
    _register(f"{_prefix}CenteredRMSProp", ["var", "mg", "ms", "mom"],
              ["lr", "rho", "momentum", "epsilon"], sparse=_sparse)
    _register(f"{_prefix}Adadelta", ["var", "accum", "accum_update"], ["lr", "rho", "epsilon"],
              sparse=_sparse)
_register("ApplyAdam", ["var", "m", "v"],
          ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"], (), _NESTEROV)
_BY_LR = ["multiply_linear_by_lr: bool = false"]
for _sparse in (False, True):
    _prefix = "SparseApply" if _sparse else "Apply"
    _register(f"{_prefix}Ftrl", ["var", "accum", "linear"], [], ["lr", "l1", "l2", "lr_power"],
              _BY_LR, _sparse)
    _register(f"{_prefix}FtrlV2", ["var", "accum", "linear"], [],
              ["lr", "l1", "l2", "l2_shrinkage", "lr_power"], _BY_LR, _sparse)
    _register(f"{_prefix}ProximalAdagrad", ["var", "accum"], ["lr", "l1", "l2"], sparse=_sparse)
_register("SparseApplyProximalGradientDescent", ["var"], ["alpha", "l1", "l2"], sparse=True)
register_op("ApplyProximalGradientDescent",
            inputs=["var: Ref(T)", "alpha: T", "l1: T", "l2: T", "delta: T"],
            outputs=["out: Ref(T)"], attrs=[_T, _LOCK], shape_fn=_apply_shape(1, (1, 2, 3), 4))


# -- Python wrappers (TF's gen_training_ops) ---------------------------------------------------
def apply_gradient_descent(var, alpha, delta, use_locking=False, name=None):
    """`var -= alpha * delta`; returns the ref of `var`."""
    return apply_op("ApplyGradientDescent", var, alpha, delta, use_locking=use_locking,
                    name=name)


def apply_momentum(var, accum, lr, grad, momentum, use_locking=False, use_nesterov=False,
                   name=None):
    """`accum = accum * momentum + grad; var -= lr * accum` (Nesterov: see the kernel)."""
    return apply_op("ApplyMomentum", var, accum, lr, grad, momentum, use_locking=use_locking,
                    use_nesterov=use_nesterov, name=name)


def sparse_apply_momentum(var, accum, lr, grad, indices, momentum, use_locking=False,
                          use_nesterov=False, name=None):
    return apply_op("SparseApplyMomentum", var, accum, lr, grad, indices, momentum,
                    use_locking=use_locking, use_nesterov=use_nesterov, name=name)


def apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
               use_locking=False, use_nesterov=False, name=None):
    """The Adam update of `var`, `m` and `v` (see runtime/kernels/cpu/training.py)."""
    return apply_op("ApplyAdam", var, m, v, beta1_power, beta2_power, lr, beta1, beta2,
                    epsilon, grad, use_locking=use_locking, use_nesterov=use_nesterov,
                    name=name)


def apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, use_locking=False,
                   name=None):
    return apply_op("ApplyRMSProp", var, ms, mom, lr, rho, momentum, epsilon, grad,
                    use_locking=use_locking, name=name)


def sparse_apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                          use_locking=False, name=None):
    return apply_op("SparseApplyRMSProp", var, ms, mom, lr, rho, momentum, epsilon, grad,
                    indices, use_locking=use_locking, name=name)


def apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad,
                            use_locking=False, name=None):
    return apply_op("ApplyCenteredRMSProp", var, mg, ms, mom, lr, rho, momentum, epsilon,
                    grad, use_locking=use_locking, name=name)


def sparse_apply_centered_rms_prop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices,
                                   use_locking=False, name=None):
    return apply_op("SparseApplyCenteredRMSProp", var, mg, ms, mom, lr, rho, momentum,
                    epsilon, grad, indices, use_locking=use_locking, name=name)


def apply_adagrad(var, accum, lr, grad, use_locking=False, update_slots=True, name=None):
    return apply_op("ApplyAdagrad", var, accum, lr, grad, use_locking=use_locking,
                    update_slots=update_slots, name=name)


def sparse_apply_adagrad(var, accum, lr, grad, indices, use_locking=False, update_slots=True,
                         name=None):
    return apply_op("SparseApplyAdagrad", var, accum, lr, grad, indices,
                    use_locking=use_locking, update_slots=update_slots, name=name)


def apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, use_locking=False,
                   name=None):
    return apply_op("ApplyAdadelta", var, accum, accum_update, lr, rho, epsilon, grad,
                    use_locking=use_locking, name=name)


def sparse_apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad, indices,
                          use_locking=False, name=None):
    return apply_op("SparseApplyAdadelta", var, accum, accum_update, lr, rho, epsilon, grad,
                    indices, use_locking=use_locking, name=name)


def apply_ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=None,
               use_locking=False, name=None):
    """FTRL-proximal (ApplyFtrl, or ApplyFtrlV2 with `l2_shrinkage`)."""
    if l2_shrinkage is None:
        return apply_op("ApplyFtrl", var, accum, linear, grad, lr, l1, l2, lr_power,
                        use_locking=use_locking, name=name)
    return apply_op("ApplyFtrlV2", var, accum, linear, grad, lr, l1, l2, l2_shrinkage,
                    lr_power, use_locking=use_locking, name=name)


def sparse_apply_ftrl(var, accum, linear, grad, indices, lr, l1, l2, lr_power,
                      l2_shrinkage=None, use_locking=False, name=None):
    if l2_shrinkage is None:
        return apply_op("SparseApplyFtrl", var, accum, linear, grad, indices, lr, l1, l2,
                        lr_power, use_locking=use_locking, name=name)
    return apply_op("SparseApplyFtrlV2", var, accum, linear, grad, indices, lr, l1, l2,
                    l2_shrinkage, lr_power, use_locking=use_locking, name=name)


def apply_proximal_adagrad(var, accum, lr, l1, l2, grad, use_locking=False, name=None):
    return apply_op("ApplyProximalAdagrad", var, accum, lr, l1, l2, grad,
                    use_locking=use_locking, name=name)


def sparse_apply_proximal_adagrad(var, accum, lr, l1, l2, grad, indices, use_locking=False,
                                  name=None):
    return apply_op("SparseApplyProximalAdagrad", var, accum, lr, l1, l2, grad, indices,
                    use_locking=use_locking, name=name)


def apply_proximal_gradient_descent(var, alpha, l1, l2, delta, use_locking=False, name=None):
    return apply_op("ApplyProximalGradientDescent", var, alpha, l1, l2, delta,
                    use_locking=use_locking, name=name)


def sparse_apply_proximal_gradient_descent(var, alpha, l1, l2, grad, indices, use_locking=False,
                                           name=None):
    return apply_op("SparseApplyProximalGradientDescent", var, alpha, l1, l2, grad, indices,
                    use_locking=use_locking, name=name)


# NOTE: TF1 does not export these wrappers under tf.*; they stay internal (tf.raw_ops-like).
__all__: list[str] = []
