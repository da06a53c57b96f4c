"""Lowerings of nn ops: activations and their gradients, BiasAdd(Grad), softmax, the softmax
cross-entropy losses and `_FusedMatMul` (the remapper's MatMul + BiasAdd + activation)."""

from __future__ import annotations

from tensorweave.runtime.kernels.xla.backend import jax_modules
from tensorweave.runtime.kernels.xla.lower import register_lowering, register_simple_lowering


def _activations(jnp, lax, alpha=0.2):
    jax = jax_modules()[0]
    return {
        "Relu": lambda x: jnp.maximum(x, 0).astype(x.dtype),
        "Relu6": lambda x: jnp.clip(x, 0, 6).astype(x.dtype),
        "Sigmoid": jax.nn.sigmoid,
        "Tanh": jnp.tanh,
        "Elu": lambda x: jnp.where(x > 0, x, jnp.expm1(jnp.minimum(x, 0))),
        "Softplus": jax.nn.softplus,
        "LeakyRelu": lambda x: jnp.where(x > 0, x, x * alpha).astype(x.dtype),
    }


for _name in ("Relu", "Relu6", "Sigmoid", "Elu", "Softplus"):
    register_simple_lowering(_name, lambda jnp, lax, n=_name: _activations(jnp, lax)[n])


@register_lowering("LeakyRelu")
def _leaky_relu(node):
    _, jnp, lax = jax_modules()
    return _activations(jnp, lax, float(node.attr("alpha", 0.2)))["LeakyRelu"]


register_simple_lowering("ReluGrad", lambda jnp, lax: lambda dy, x: jnp.where(x > 0, dy, 0)
                         .astype(dy.dtype))
# NOTE: for complex y TF multiplies by the conjugate of the derivative
register_simple_lowering("SigmoidGrad", lambda jnp, lax: lambda y, dy: dy * jnp.conj(
    y * (1 - y)))
register_simple_lowering("TanhGrad", lambda jnp, lax: lambda y, dy: dy * jnp.conj(1 - y * y))
register_simple_lowering("Softmax", lambda jnp, lax: jax_modules()[0].nn.softmax)
register_simple_lowering("LogSoftmax", lambda jnp, lax: jax_modules()[0].nn.log_softmax)


@register_lowering("BiasAdd")
def _bias_add(node):
    nchw = node.attr("data_format") == "NCHW"

    def run(x, b):
        if nchw and x.ndim > 2:
            return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
        return x + b

    return run


@register_lowering("BiasAddGrad")
def _bias_add_grad(node):
    nchw = node.attr("data_format") == "NCHW"
    _, jnp, _ = jax_modules()

    def run(dy):
        keep = 1 if nchw and dy.ndim > 2 else dy.ndim - 1
        return jnp.sum(dy, axis=tuple(a for a in range(dy.ndim) if a != keep)).astype(dy.dtype)

    return run


@register_lowering("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent(node):
    jax, jnp, _ = jax_modules()

    def run(logits, labels):
        # NOTE: as TF's XLA kernel, labels out of range give NaN rows instead of an error
        log_p = jax.nn.log_softmax(logits, axis=-1)
        onehot = jax.nn.one_hot(labels, logits.shape[-1], dtype=logits.dtype)
        loss = -jnp.sum(onehot * log_p, axis=-1)
        return loss, jnp.exp(log_p) - onehot

    return run


@register_lowering("SoftmaxCrossEntropyWithLogits")
def _xent(node):
    jax, jnp, _ = jax_modules()

    def run(logits, labels):
        log_p = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.sum(labels * log_p, axis=-1), jnp.exp(log_p) - labels

    return run


@register_lowering("_FusedMatMul")
def _fused_matmul(node):
    _, jnp, lax = jax_modules()
    ta, tb = bool(node.attr("transpose_a")), bool(node.attr("transpose_b"))
    ops = list(node.attr("fused_ops") or [])
    acts = _activations(jnp, lax, float(node.attr("leakyrelu_alpha", 0.2) or 0.2))
    for op in ops:
        if op not in ("BiasAdd", "Add") and op not in acts:
            raise ValueError(f"unsupported fused op {op}")

    def run(a, b, *args):
        y = jnp.matmul(a.T if ta else a, b.T if tb else b)
        for op in ops:
            y = y + args[0] if op in ("BiasAdd", "Add") else acts[op](y)
        return y

    return run


register_simple_lowering("Relu6Grad", lambda jnp, lax: lambda dy, x: jnp.where(
    (x > 0) & (x < 6), dy, 0).astype(dy.dtype))
register_simple_lowering("EluGrad", lambda jnp, lax: lambda dy, y: jnp.where(
    y > 0, dy, dy * (y + 1)).astype(dy.dtype))
register_simple_lowering("SoftplusGrad", lambda jnp, lax: lambda dy, x: dy * jax_modules()[0]
                         .nn.sigmoid(x))
register_simple_lowering("Softsign", lambda jnp, lax: lambda x: x / (1 + jnp.abs(x)))
register_simple_lowering("Selu", lambda jnp, lax: jax_modules()[0].nn.selu)


@register_lowering("LeakyReluGrad")
def _leaky_relu_grad(node):
    _, jnp, _ = jax_modules()
    alpha = float(node.attr("alpha", 0.2))
    return lambda dy, x: jnp.where(x > 0, dy, dy * alpha).astype(dy.dtype)
