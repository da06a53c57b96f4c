"""CPU kernels for the nn family: activations and their gradients, softmax, bias add,
cross entropies, L2Loss, LRN, top-k. Convolution and pooling: `conv.py`; batch norm:
`nn_norm.py`.

Every kernel returns the op's declared dtype (numpy's promotion to float64 is avoided by
using Python scalars); half precision is computed in float32 where sums are involved.
"""

from __future__ import annotations

import numpy as np

from tensorweave import errors
from tensorweave.runtime.kernels.cpu import native, parallel
from tensorweave.runtime.kernels.cpu.conv_impl import compute_dtype
from tensorweave.runtime.kernels.registry import register_kernel, register_simple_kernel

SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


# -- activations --------------------------------------------------------------------------------
# NOTE: np.where and masked copies are ~10x slower than arithmetic on large float32 arrays, so
# the selections below are written as max/min and products with boolean masks (TF's own
# ReluGrad is a product with the mask too).
def _relu(x):
    return np.maximum(x, 0)


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


def _elu(x):
    return np.maximum(x, 0) + np.expm1(np.minimum(x, 0))


def _selu(x):
    neg = np.expm1(np.minimum(x, 0))
    neg *= SELU_ALPHA * SELU_SCALE
    return np.maximum(x, 0) * SELU_SCALE + neg


def _softplus(x):
    return np.logaddexp(x, 0).astype(np.asarray(x).dtype, copy=False)


def _softsign(x):
    return x / (1 + np.abs(x))


def _select(mask, a, b):
    """mask ? a : b for finite values, without np.where."""
    return a * mask + b * ~mask


def _same_layout(*arrays) -> bool:
    """Whether the arrays (numpy arrays or scalars) are big enough to split over threads,
    C-contiguous, of one shape and dtype."""
    a0 = arrays[0]
    return a0.size >= parallel.MIN_PARALLEL and all(
        a.flags.c_contiguous and a.shape == a0.shape and a.dtype == a0.dtype for a in arrays)


def _relu_kernel(x):
    """max(x, 0); big arrays split over threads (`parallel.for_blocks`).

    NOTE: one- or two-pass kernels are not cache-blocked: measured (1024x1024 float32,
    warm or right after a GEMM), blocks cost more calls than they save."""
    if getattr(x, "size", 0) < parallel.MIN_PARALLEL or not _same_layout(x):
        return np.maximum(x, 0)
    out = np.empty_like(x)
    fx, fo = x.reshape(-1), out.reshape(-1)
    parallel.for_blocks(fx.size, lambda w, lo, hi: np.maximum(fx[lo:hi], 0, out=fo[lo:hi]),
                        block=None)
    return out


register_simple_kernel("Relu", _relu_kernel)
register_simple_kernel("Relu6", _relu6)
register_simple_kernel("Elu", _elu)
register_simple_kernel("Selu", _selu)
register_simple_kernel("Softplus", _softplus)
register_simple_kernel("Softsign", _softsign)


@register_kernel("LeakyRelu")
def _leaky_relu(node):
    alpha = float(node.attr("alpha"))
    if alpha <= 1:
        return lambda x: np.maximum(x, x * alpha)
    return lambda x: np.minimum(x, x * alpha)


# -- activation gradients -----------------------------------------------------------------------
def _relu_grad(g, x):
    """g * (x > 0) (TF's formula: inf/nan gradients stay nan where x <= 0); big arrays split
    over threads; float32 in one compiled pass."""
    if native.usable(g, x) and g.shape == x.shape:
        return native.relu_grad(g, x)
    if getattr(g, "size", 0) < parallel.MIN_PARALLEL or not _same_layout(g, x):
        return g * (x > 0)
    out = np.empty_like(g)
    fg, fx, fo = g.reshape(-1), x.reshape(-1), out.reshape(-1)

    def block(w: int, lo: int, hi: int) -> None:
        np.multiply(fg[lo:hi], np.greater(fx[lo:hi], 0), out=fo[lo:hi])

    parallel.for_blocks(fo.size, block, block=None)
    return out


def _relu6_grad(g, x):
    return g * ((x > 0) & (x < 6))


def _elu_grad(g, y):
    return g * (np.minimum(y, 0) + 1)


def _selu_grad(g, y):
    g = np.asarray(g)
    return _select(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)


def _softplus_grad(g, x):
    return g * (0.5 + 0.5 * np.tanh(0.5 * x))  # sigmoid(x), without overflow


def _softsign_grad(g, x):
    return g / np.square(1 + np.abs(x))


register_simple_kernel("ReluGrad", _relu_grad)
register_simple_kernel("Relu6Grad", _relu6_grad)
register_simple_kernel("EluGrad", _elu_grad)
register_simple_kernel("SeluGrad", _selu_grad)
register_simple_kernel("SoftplusGrad", _softplus_grad)
register_simple_kernel("SoftsignGrad", _softsign_grad)


@register_kernel("LeakyReluGrad")
def _leaky_relu_grad(node):
    alpha = float(node.attr("alpha"))
    return lambda g, x: _select(x > 0, g, g * alpha)


# -- softmax ------------------------------------------------------------------------------------
def _check_logits(x):
    x = np.asarray(x)
    if x.ndim < 1:
        raise _invalid(f"logits must have >= 1 dimension, got {list(x.shape)}")
    return x


def _row_max(z: np.ndarray) -> np.ndarray:
    """z.max(axis=-1, keepdims=True); a few columns over many rows as a loop of column
    maxima (numpy's reduction over a short last axis is ~10x slower)."""
    c = z.shape[-1]
    if not 1 < c <= 16 or z.size < 128 * c:
        return z.max(axis=-1, keepdims=True)
    z2 = z.reshape(-1, c)
    m = z2[:, 0].copy()
    for j in range(1, c):
        np.maximum(m, z2[:, j], out=m)
    return m.reshape(z.shape[:-1] + (1,))


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (dtype kept; half computed in float32)."""
    x = _check_logits(x)
    if x.shape[-1] == 0:
        return x.copy()
    z = x.astype(compute_dtype(x.dtype), copy=False)
    e = np.exp(z - _row_max(z))
    e /= e.sum(axis=-1, keepdims=True)
    return e.astype(x.dtype, copy=False)


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = _check_logits(x)
    if x.shape[-1] == 0:
        return x.copy()
    z = x.astype(compute_dtype(x.dtype), copy=False)
    s = z - _row_max(z)
    s -= np.log(np.exp(s).sum(axis=-1, keepdims=True))
    return s.astype(x.dtype, copy=False)


register_simple_kernel("Softmax", softmax)
register_simple_kernel("LogSoftmax", log_softmax)


# -- bias add -----------------------------------------------------------------------------------
def _bias_axis(x: np.ndarray, nchw: bool) -> int:
    if x.ndim < (3 if nchw else 2):
        raise _invalid(f"Input tensor must be at least {3 if nchw else 2}D: {list(x.shape)}")
    return 1 if nchw else x.ndim - 1


def _bias_add_fn(nchw: bool):
    def run(x, b):
        x, b = np.asarray(x), np.asarray(b)
        if b.ndim != 1:
            raise _invalid(f"Biases must be 1D: {list(b.shape)}")
        axis = _bias_axis(x, nchw)
        if x.shape[axis] != b.shape[0]:
            raise _invalid(f"Must provide as many biases as the channel dimension of the "
                           f"input tensor: {list(b.shape)} vs. {list(x.shape)}")
        if axis != x.ndim - 1:
            b = b.reshape((-1,) + (1,) * (x.ndim - axis - 1))
        elif b.dtype == x.dtype and _same_layout(x):
            return add_bias_rows(x, b)
        return x + b

    return run


def add_bias_rows(x: np.ndarray, b: np.ndarray, out: np.ndarray | None = None,
                  then=None) -> np.ndarray:
    """out = x + b over the last axis (x C-contiguous, b 1-D), then `then(rows)` in place on
    each range of whole rows; big arrays split over threads. `out` may be `x` itself."""
    rows = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
    if out is None:
        out = np.empty_like(x)
    o = out.reshape(rows.shape)

    def block(w: int, lo: int, hi: int) -> None:
        y = np.add(rows[lo:hi], b, out=o[lo:hi])
        if then is not None:
            then(y)

    per_row = max(1, rows.shape[1])
    parallel.for_blocks(rows.shape[0], block, block=None,
                        min_parallel=-(-parallel.MIN_PARALLEL // per_row))
    return out


register_kernel("BiasAdd")(lambda node: _bias_add_fn(node.attr("data_format") == "NCHW"))
register_kernel("BiasAddV1")(lambda node: _bias_add_fn(False))


@register_kernel("BiasAddGrad")
def _bias_add_grad(node):
    nchw = node.attr("data_format") == "NCHW"
    dt = node.output_dtypes[0].np_dtype
    acc = compute_dtype(dt) if dt.kind == "f" else dt

    def run(g):
        g = np.asarray(g)
        axis = _bias_axis(g, nchw)
        if axis == g.ndim - 1 and acc.kind == "f":
            g2 = g.reshape(-1, g.shape[-1]).astype(acc, copy=False)
            out = np.dot(np.ones(g2.shape[0], acc), g2)      # BLAS: 3-5x a numpy sum
        elif axis == g.ndim - 1:
            out = g.reshape(-1, g.shape[-1]).sum(axis=0, dtype=acc)
        else:
            out = g.sum(axis=tuple(i for i in range(g.ndim) if i != axis), dtype=acc)
        return out.astype(dt, copy=False)

    return run


# -- cross entropies ----------------------------------------------------------------------------
def _log_softmax_parts(logits: np.ndarray):
    """(shifted logits, log of the normalizer) per row, in the compute dtype."""
    z = logits.astype(compute_dtype(logits.dtype), copy=False)
    shifted = z - _row_max(z)
    return shifted, np.log(np.exp(shifted).sum(axis=1, keepdims=True))


@register_kernel("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(node):
    dt = node.output_dtypes[0].np_dtype

    def run(logits, labels):
        logits, labels = np.asarray(logits), np.asarray(labels)
        if logits.ndim != 2 or labels.ndim != 2:
            raise _invalid(f"logits and labels must be either 2-dimensional, or broadcasted "
                           f"to be 2-dimensional: {list(logits.shape)} vs {list(labels.shape)}")
        logits, labels = np.broadcast_arrays(logits, labels)
        shifted, log_norm = _log_softmax_parts(logits)
        lab = labels.astype(shifted.dtype, copy=False)
        loss = np.sum(lab * (log_norm - shifted), axis=1)
        backprop = np.exp(shifted - log_norm) - lab
        return loss.astype(dt, copy=False), backprop.astype(dt, copy=False)

    return run


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(node):
    dt = node.output_dtypes[0].np_dtype

    def run(logits, labels):
        logits, labels = np.asarray(logits), np.asarray(labels)
        if logits.ndim != 2 or labels.ndim != 1 or logits.shape[0] != labels.shape[0]:
            raise _invalid(f"logits must be 2-D and labels 1-D with the same first dimension: "
                           f"logits shape {list(logits.shape)}, labels shape "
                           f"{list(labels.shape)}")
        depth = logits.shape[1]
        bad = (labels < 0) | (labels >= depth)
        if bad.any():
            raise _invalid(f"Received a label value of {labels[bad][0]} which is outside the "
                           f"valid range of [0, {depth}).  Label values: "
                           f"{' '.join(str(v) for v in labels.tolist())}")
        if native.usable(logits) and logits.size:
            loss, backprop = native.sparse_xent(logits, labels)
            return loss.astype(dt, copy=False), backprop.astype(dt, copy=False)
        shifted, log_norm = _log_softmax_parts(logits)
        rows = np.arange(labels.shape[0])
        loss = log_norm[:, 0] - shifted[rows, labels]
        backprop = np.exp(shifted - log_norm)
        backprop[rows, labels] -= 1
        return loss.astype(dt, copy=False), backprop.astype(dt, copy=False)

    return run


# -- L2Loss, LRN --------------------------------------------------------------------------------
def _l2_loss(t):
    t = np.asarray(t)
    z = t.astype(compute_dtype(t.dtype), copy=False).reshape(-1)
    return np.asarray(np.dot(z, z) * 0.5, dtype=t.dtype)


register_simple_kernel("L2Loss", _l2_loss)


def window_sum(a: np.ndarray, radius: int) -> np.ndarray:
    """Sum over the last axis of a[..., d - radius : d + radius + 1] for every d."""
    depth = a.shape[-1]
    out = a.copy()
    for k in range(1, min(radius, depth - 1) + 1):
        out[..., k:] += a[..., :-k]
        out[..., :-k] += a[..., k:]
    return out


class _Lrn:
    def __init__(self, node):
        self.radius = int(node.attr("depth_radius"))
        self.bias = float(node.attr("bias"))
        self.alpha = float(node.attr("alpha"))
        self.beta = float(node.attr("beta"))
        self.dtype = node.output_dtypes[0].np_dtype

    def norm(self, x: np.ndarray) -> np.ndarray:
        if x.ndim != 4:
            raise _invalid(f"input must be 4-dimensional, got {list(x.shape)}")
        return self.bias + self.alpha * window_sum(np.square(x), self.radius)


@register_kernel("LRN")
def _lrn(node):
    p = _Lrn(node)

    def run(x):
        x = np.asarray(x, compute_dtype(p.dtype))
        return (x * p.norm(x) ** -p.beta).astype(p.dtype, copy=False)

    return run


@register_kernel("LRNGrad")
def _lrn_grad(node):
    p = _Lrn(node)

    def run(grads, x, y):
        cd = compute_dtype(p.dtype)
        g, x = np.asarray(grads, cd), np.asarray(x, cd)
        norm = p.norm(x)
        t = g * x * norm ** (-p.beta - 1)
        dx = g * norm ** -p.beta - (2 * p.alpha * p.beta) * x * window_sum(t, p.radius)
        return dx.astype(p.dtype, copy=False)

    return run


# -- top-k --------------------------------------------------------------------------------------
def top_k(x: np.ndarray, k: int):
    """(values, indices) of the k largest along the last axis, descending; among equal
    values the lower index comes first (TF's order)."""
    n = x.shape[-1]
    order = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
    idx = (n - 1) - order
    return np.take_along_axis(x, idx, axis=-1), idx


def _top_k_run(x, k, index_dtype):
    x = np.asarray(x)
    k = int(k)
    if k < 0:
        raise _invalid(f"Need k >= 0, got {k}")
    if x.ndim < 1:
        raise _invalid(f"input must be >= 1-D, got shape {list(x.shape)}")
    if x.shape[-1] < k:
        raise _invalid(f"input must have at least k columns. Had {x.shape[-1]}, needed {k}")
    values, idx = top_k(x, k)
    return values, idx.astype(index_dtype)


@register_kernel("TopKV2")
def _top_k_v2(node):
    index_dtype = node.output_dtypes[1].np_dtype
    return lambda x, k: _top_k_run(x, k, index_dtype)


@register_kernel("TopK")
def _top_k_v1(node):
    k = int(node.attr("k"))
    return lambda x: _top_k_run(x, k, np.int32)


def in_top_k(predictions: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
    """TF's InTopK: the target's prediction is finite, the row has no non-finite value, and
    fewer than k classes score strictly higher (ties at the boundary count as in)."""
    predictions = np.asarray(predictions)
    targets = np.asarray(targets).astype(np.int64)
    if predictions.ndim != 2 or targets.ndim != 1 or \
            predictions.shape[0] != targets.shape[0]:
        raise _invalid(f"predictions must be 2-D and targets 1-D with the same first "
                       f"dimension: {list(predictions.shape)} vs {list(targets.shape)}")
    classes = predictions.shape[1]
    valid = (targets >= 0) & (targets < classes)
    target_pred = predictions[np.arange(len(targets)), np.where(valid, targets, 0)]
    more = np.sum(predictions > target_pred[:, None], axis=1)
    finite = np.isfinite(predictions).all(axis=1) & np.isfinite(target_pred)
    return valid & finite & (more < k)


@register_kernel("InTopK")
def _in_top_k_v1(node):
    k = int(node.attr("k"))
    return lambda p, t: in_top_k(p, t, k)


register_simple_kernel("InTopKV2", lambda p, t, k: in_top_k(p, t, int(k)))
