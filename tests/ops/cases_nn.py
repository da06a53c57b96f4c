"""Harness cases for the nn family: every op on non-square inputs (2x5x7x3 images), both
paddings, strides and dilations of 2, NCHW, and several dtypes; references in
`nn_reference.py` (loops over windows, float64)."""

from __future__ import annotations

import numpy as np

import tensorweave.ops.nn_conv  # noqa: F401  (registers the nn family until ops/__init__ does)
import tensorweave.ops.nn_impl  # noqa: F401
import tensorweave.ops.nn_losses  # noqa: F401
import tensorweave.ops.nn_norm  # noqa: F401
import tensorweave.ops.nn_ops  # noqa: F401
import tensorweave.runtime.kernels.cpu.conv  # noqa: F401
import tensorweave.runtime.kernels.cpu.nn  # noqa: F401
import tensorweave.runtime.kernels.cpu.nn_norm  # noqa: F401
from tensorweave.ops.apply import apply_op
from tests.ops import nn_reference as ref
from tests.ops.harness import OpCase

_rng = np.random.default_rng(1234)
SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0):
    return _rng.uniform(low, high, shape).astype(dtype)


def nchw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))


X = rand(2, 5, 7, 3)
X64 = rand(2, 5, 7, 3, dtype=np.float64)
G = rand(2, 5, 7, 3)
LOGITS = rand(4, 5)


def op(op_type, **attrs):
    """A build function creating `op_type` with `attrs` on the harness's inputs."""
    return lambda *ins: apply_op(op_type, *ins, **attrs)


def unary_cases():
    f = ref
    return [
        OpCase("Relu", op("Relu"), [X], lambda x: np.maximum(x, 0)),
        OpCase("Relu", op("Relu"), [np.array([[-3, 0, 4]], np.int32)], lambda x: np.maximum(x, 0),
               name="int32"),
        OpCase("Relu6", op("Relu6"), [X * 4], lambda x: np.clip(x, 0, 6)),
        OpCase("Elu", op("Elu"), [X64], lambda x: np.where(x < 0, np.exp(x) - 1, x)),
        OpCase("Selu", op("Selu"), [X],
               lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * (np.exp(x) - 1), x)),
        OpCase("LeakyRelu", op("LeakyRelu", alpha=0.1), [X], lambda x: np.where(x > 0, x, 0.1 * x)),
        OpCase("Softplus", op("Softplus"), [X * 20],
               lambda x: np.log1p(np.exp(-np.abs(x.astype(np.float64)))) + np.maximum(x, 0),
               rtol=1e-5, atol=1e-5),
        OpCase("Softsign", op("Softsign"), [X], lambda x: x / (1 + np.abs(x))),
        OpCase("Softmax", op("Softmax"), [X], lambda x: f.softmax(x).astype(np.float32)),
        OpCase("Softmax", op("Softmax"), [X.astype(np.float16)],
               lambda x: f.softmax(x).astype(np.float16), rtol=2e-3, atol=1e-3, name="half"),
        OpCase("LogSoftmax", op("LogSoftmax"), [X64], f.log_softmax),
        OpCase("L2Loss", op("L2Loss"), [X], lambda x: np.float32(np.sum(x.astype(np.float64) ** 2)
                                                                  / 2)),
    ]


def grad_cases():
    feats = X * 4
    y_elu = np.where(X < 0, np.exp(X) - 1, X).astype(np.float32)
    y_selu = (SELU_SCALE * np.where(X < 0, SELU_ALPHA * (np.exp(X) - 1), X)).astype(np.float32)
    sig = 1 / (1 + np.exp(-X.astype(np.float64)))
    return [
        OpCase("ReluGrad", op("ReluGrad"), [G, X], lambda g, x: g * (x > 0)),
        OpCase("Relu6Grad", op("Relu6Grad"), [G, feats], lambda g, x: g * ((x > 0) & (x < 6))),
        OpCase("EluGrad", op("EluGrad"), [G, y_elu], lambda g, y: np.where(y < 0, g * (y + 1), g)),
        OpCase("SeluGrad", op("SeluGrad"), [G, y_selu],
               lambda g, y: np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)),
        OpCase("SoftplusGrad", op("SoftplusGrad"), [G, X],
               lambda g, x: (g * sig).astype(np.float32)),
        OpCase("SoftsignGrad", op("SoftsignGrad"), [G, X], lambda g, x: g / (1 + np.abs(x)) ** 2),
        OpCase("LeakyReluGrad", op("LeakyReluGrad", alpha=0.3), [G, X],
               lambda g, x: np.where(x > 0, g, 0.3 * g)),
    ]


def bias_cases():
    b3 = rand(3)
    b5 = rand(5)
    x_nchw = rand(2, 5, 7, 3)
    return [
        OpCase("BiasAdd", op("BiasAdd"), [X, b3], lambda x, b: x + b),
        OpCase("BiasAdd", op("BiasAdd", data_format="NCHW"), [x_nchw, b5],
               lambda x, b: x + b[:, None, None], name="NCHW"),
        OpCase("BiasAdd", op("BiasAdd"), [np.arange(6, dtype=np.int64).reshape(2, 3),
                                          np.array([1, 2, 3], np.int64)],
               lambda x, b: x + b, name="int64"),
        OpCase("BiasAddV1", op("BiasAddV1"), [X, b3], lambda x, b: x + b),
        OpCase("BiasAddGrad", op("BiasAddGrad"), [G], lambda g: g.sum(axis=(0, 1, 2))),
        OpCase("BiasAddGrad", op("BiasAddGrad", data_format="NCHW"), [G],
               lambda g: g.sum(axis=(0, 2, 3)), name="NCHW"),
    ]


def xent_cases():
    labels = ref.softmax(rand(4, 5)).astype(np.float32)
    sparse = np.array([0, 4, 2, 1], np.int32)

    def xent(z, lab):
        lab = np.broadcast_to(lab, z.shape)
        lsm = ref.log_softmax(z)
        return [(-(lab * lsm).sum(1)).astype(z.dtype), (np.exp(lsm) - lab).astype(z.dtype)]

    def sparse_xent(z, lab):
        lsm = ref.log_softmax(z)
        onehot = np.eye(z.shape[1])[lab]
        return [(-lsm[np.arange(len(lab)), lab]).astype(z.dtype),
                (np.exp(lsm) - onehot).astype(z.dtype)]

    return [
        OpCase("SoftmaxCrossEntropyWithLogits", op("SoftmaxCrossEntropyWithLogits"),
               [LOGITS, labels], xent),
        OpCase("SoftmaxCrossEntropyWithLogits", op("SoftmaxCrossEntropyWithLogits"),
               [LOGITS, labels[:1]], xent, name="broadcast_labels"),
        OpCase("SoftmaxCrossEntropyWithLogits", op("SoftmaxCrossEntropyWithLogits"),
               [LOGITS.astype(np.float64), labels.astype(np.float64)], xent, name="double"),
        OpCase("SparseSoftmaxCrossEntropyWithLogits", op("SparseSoftmaxCrossEntropyWithLogits"),
               [LOGITS, sparse], sparse_xent),
        OpCase("SparseSoftmaxCrossEntropyWithLogits", op("SparseSoftmaxCrossEntropyWithLogits"),
               [LOGITS, sparse.astype(np.int64)], sparse_xent, name="int64"),
    ]


def misc_cases():
    ties = np.array([[3, 1, 3, 5, 1], [0, 0, 0, 0, 0], [2, 9, 9, 1, 9]], np.float32)
    pred = rand(4, 6)
    pred[3, 2] = np.inf
    targets = np.array([1, 5, 0, 2], np.int32)
    image = rand(2, 5, 7, 6)
    grads = rand(2, 5, 7, 6)
    lrn_attrs = {"depth_radius": 2, "bias": 1.5, "alpha": 0.3, "beta": 0.75}
    return [
        OpCase("TopKV2", op("TopKV2"), [ties, np.int32(3)], lambda x, k: list(ref.top_k(x, 3))),
        OpCase("TopKV2", op("TopKV2"), [rand(2, 3, 7), np.int32(2)],
               lambda x, k: list(ref.top_k(x, 2)), name="rank3"),
        OpCase("TopKV2", op("TopKV2", index_type="int64"),
               [np.array([5, 1, 5, 3], np.int64), np.int64(4)],
               lambda x, k: [ref.top_k(x, 4)[0], ref.top_k(x, 4)[1].astype(np.int64)],
               name="int64"),
        OpCase("TopK", op("TopK", k=2), [ties], lambda x: list(ref.top_k(x, 2))),
        OpCase("InTopKV2", op("InTopKV2"), [pred, targets, np.int32(2)],
               lambda p, t, k: ref.in_top_k(p, t, 2)),
        OpCase("InTopK", op("InTopK", k=1), [ties, np.array([0, 3, 1], np.int64)],
               lambda p, t: ref.in_top_k(p, t, 1)),
        OpCase("LRN", op("LRN", **lrn_attrs), [image],
               lambda x: ref.lrn(x, 2, 1.5, 0.3, 0.75).astype(np.float32)),
        OpCase("LRNGrad", op("LRNGrad", **lrn_attrs),
               [grads, image, ref.lrn(image, 2, 1.5, 0.3, 0.75).astype(np.float32)],
               lambda g, x, y: _lrn_grad_ref(g, x, 2, 1.5, 0.3, 0.75), rtol=1e-4, atol=1e-5),
    ]


def _lrn_grad_ref(g, x, r, bias, alpha, beta):
    """Vector-Jacobian product of ref.lrn by central differences in float64."""
    x = x.astype(np.float64)
    out = np.zeros_like(x)
    eps = 1e-6
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        out[i] = np.sum(g * (ref.lrn(xp, r, bias, alpha, beta) - ref.lrn(xm, r, bias, alpha, beta))
                        ) / (2 * eps)
    return out.astype(np.float32)


# -- convolution --------------------------------------------------------------------------------
CONV_CONFIGS = [
    # name, strides, padding, dilations, explicit, fmt, filter (kh, kw)
    ("same", [1, 1, 1, 1], "SAME", None, [], "NHWC", (3, 3)),
    ("valid", [1, 1, 1, 1], "VALID", None, [], "NHWC", (3, 2)),
    ("same_stride2", [1, 2, 2, 1], "SAME", None, [], "NHWC", (3, 3)),
    ("valid_stride2", [1, 2, 2, 1], "VALID", None, [], "NHWC", (2, 3)),
    ("same_dilation2", [1, 1, 1, 1], "SAME", [1, 2, 2, 1], [], "NHWC", (3, 3)),
    ("valid_dilation2", [1, 1, 1, 1], "VALID", [1, 2, 2, 1], [], "NHWC", (2, 3)),
    ("explicit", [1, 1, 2, 1], "EXPLICIT", None, [0, 0, 1, 2, 0, 1, 0, 0], "NHWC", (3, 3)),
    ("nchw_same_stride2", [1, 1, 2, 2], "SAME", None, [], "NCHW", (3, 3)),
    ("pointwise", [1, 1, 1, 1], "VALID", None, [], "NHWC", (1, 1)),
    ("pointwise_stride2", [1, 2, 2, 1], "SAME", None, [], "NHWC", (1, 1)),
]


def _conv_attrs(strides, padding, dilations, explicit, fmt):
    return {"strides": strides, "padding": padding, "dilations": dilations or [1, 1, 1, 1],
            "explicit_paddings": explicit, "data_format": fmt}


def conv_cases():
    cases = []
    for name, strides, padding, dil, explicit, fmt, (kh, kw) in CONV_CONFIGS:
        attrs = _conv_attrs(strides, padding, dil, explicit, fmt)
        x = X if fmt == "NHWC" else nchw(X)
        w = rand(kh, kw, 3, 4)
        y = ref.conv2d(x, w, strides, padding, dil, explicit, fmt)
        dy = rand(*y.shape)
        kw_ = {"dilations": dil, "explicit": explicit, "fmt": fmt}
        cases += [
            OpCase("Conv2D", op("Conv2D", **attrs), [x, w],
                   lambda x, w, s=strides, p=padding, k=kw_: ref.conv2d(x, w, s, p, **k),
                   rtol=1e-4, atol=1e-5, name=name),
            OpCase("Conv2DBackpropInput", op("Conv2DBackpropInput", **attrs),
                   [np.array(x.shape, np.int32), w, dy],
                   lambda sz, w, dy, s=strides, p=padding, k=kw_:
                   ref.conv2d_backprop_input(sz, w, dy, s, p, **k),
                   rtol=1e-4, atol=1e-5, name=name),
            OpCase("Conv2DBackpropFilter", op("Conv2DBackpropFilter", **attrs),
                   [x, np.array(w.shape, np.int32), dy],
                   lambda x, sz, dy, s=strides, p=padding, k=kw_:
                   ref.conv2d_backprop_filter(x, sz, dy, s, p, **k),
                   rtol=1e-4, atol=1e-5, name=name),
        ]
    return cases + _conv_extra_cases()


def _conv_extra_cases():
    same = _conv_attrs([1, 1, 1, 1], "SAME", None, [], "NHWC")
    w64 = rand(3, 3, 3, 2, dtype=np.float64)
    grouped = rand(2, 5, 7, 4)
    wg = rand(3, 3, 2, 6)
    half_x, half_w = X.astype(np.float16), rand(3, 3, 3, 4, dtype=np.float16)
    dy = rand(2, 5, 7, 4)
    return [
        OpCase("Conv2D", op("Conv2D", **same), [X64, w64],
               lambda x, w: ref.conv2d(x, w, [1, 1, 1, 1], "SAME"), name="double"),
        OpCase("Conv2D", op("Conv2D", **same), [half_x, half_w],
               lambda x, w: ref.conv2d(x, w, [1, 1, 1, 1], "SAME"), rtol=1e-2, atol=2e-2,
               name="half"),
        OpCase("Conv2D", op("Conv2D", **same), [grouped, wg],
               lambda x, w: ref.conv2d(x, w, [1, 1, 1, 1], "SAME"), rtol=1e-4, atol=1e-5,
               name="grouped"),
        OpCase("Conv2DBackpropInput", op("Conv2DBackpropInput", **same),
               [np.array([5, 7], np.int32), rand(3, 3, 3, 4), dy],
               lambda sz, w, dy: ref.conv2d_backprop_input((2, 5, 7, 3), w, dy, [1, 1, 1, 1],
                                                           "SAME"),
               rtol=1e-4, atol=1e-5, name="spatial_sizes", exact_static_shape=False),
    ]


def depthwise_cases():
    cases = []
    for name, strides, padding, dil, fmt in [
        ("same", [1, 1, 1, 1], "SAME", None, "NHWC"),
        ("valid_stride2", [1, 2, 2, 1], "VALID", None, "NHWC"),
        ("same_dilation2", [1, 1, 1, 1], "SAME", [1, 2, 2, 1], "NHWC"),
        ("nchw", [1, 1, 2, 2], "SAME", None, "NCHW"),
    ]:
        attrs = _conv_attrs(strides, padding, dil, [], fmt)
        x = X if fmt == "NHWC" else nchw(X)
        f = rand(3, 2, 3, 2)
        y = ref.depthwise_conv2d(x, f, strides, padding, dil, fmt)
        dy = rand(*y.shape)
        def fwd(x, f, s=strides, p=padding, d=dil, fm=fmt):
            return ref.depthwise_conv2d(x, f, s, p, d, fm)

        cases += [
            OpCase("DepthwiseConv2dNative", op("DepthwiseConv2dNative", **attrs), [x, f], fwd,
                   rtol=1e-4, atol=1e-5, name=name),
            OpCase("DepthwiseConv2dNativeBackpropInput",
                   op("DepthwiseConv2dNativeBackpropInput", **attrs),
                   [np.array(x.shape, np.int32), f, dy],
                   lambda sz, f, dy, fwd=fwd: _vjp_input(fwd, np.zeros(sz, np.float64), f, dy),
                   rtol=1e-4, atol=1e-5, name=name),
            OpCase("DepthwiseConv2dNativeBackpropFilter",
                   op("DepthwiseConv2dNativeBackpropFilter", **attrs),
                   [x, np.array(f.shape, np.int32), dy],
                   lambda x, sz, dy, fwd=fwd: _vjp_filter(fwd, x, np.zeros(sz), dy),
                   rtol=1e-4, atol=1e-5, name=name),
        ]
    return cases


def _vjp_input(fwd, x0, f, dy):
    """d<dy, fwd(x, f)>/dx for a forward linear in x: fwd applied to basis vectors."""
    out = np.zeros(x0.shape)
    for i in np.ndindex(x0.shape):
        e = np.zeros(x0.shape)
        e[i] = 1
        out[i] = np.sum(fwd(e, f.astype(np.float64)) * dy)
    return out.astype(np.float32)


def _vjp_filter(fwd, x, f0, dy):
    out = np.zeros(f0.shape)
    for i in np.ndindex(f0.shape):
        e = np.zeros(f0.shape)
        e[i] = 1
        out[i] = np.sum(fwd(x.astype(np.float64), e) * dy)
    return out.astype(np.float32)


# -- pooling ------------------------------------------------------------------------------------
POOL_CONFIGS = [
    # name, ksize, strides, padding, fmt
    ("2x2_valid", [1, 2, 2, 1], [1, 2, 2, 1], "VALID", "NHWC"),
    ("2x2_same", [1, 2, 2, 1], [1, 2, 2, 1], "SAME", "NHWC"),
    ("3x3_stride2_same", [1, 3, 3, 1], [1, 2, 2, 1], "SAME", "NHWC"),
    ("3x2_stride1_valid", [1, 3, 2, 1], [1, 1, 1, 1], "VALID", "NHWC"),
    ("nchw_3x3_stride2_same", [1, 1, 3, 3], [1, 1, 2, 2], "SAME", "NCHW"),
]


def pool_cases():
    cases = []
    for name, ksize, strides, padding, fmt in POOL_CONFIGS:
        attrs = {"ksize": ksize, "strides": strides, "padding": padding, "data_format": fmt}
        x = X if fmt == "NHWC" else nchw(X)
        y = ref.max_pool(x, ksize, strides, padding, fmt)
        dy = rand(*y.shape)
        args = (ksize, strides, padding, fmt)
        cases += [
            OpCase("MaxPool", op("MaxPool", **attrs), [x],
                   lambda x, a=args: ref.max_pool(x, *a), name=name),
            OpCase("AvgPool", op("AvgPool", **attrs), [x],
                   lambda x, a=args: ref.avg_pool(x, *a), name=name),
            OpCase("MaxPoolGrad", op("MaxPoolGrad", **attrs), [x, y, dy],
                   lambda x, y, dy, a=args: ref.max_pool_grad(x, y, dy, *a), name=name),
            OpCase("AvgPoolGrad", op("AvgPoolGrad", **attrs), [np.array(x.shape, np.int32), dy],
                   lambda sz, dy, a=args: ref.avg_pool_grad(sz, dy, *a), name=name),
        ]
    return cases + _pool_extra_cases()


def _pool_extra_cases():
    attrs = {"padding": "SAME", "data_format": "NHWC"}
    k, s = np.array([1, 3, 3, 1], np.int32), np.array([1, 2, 2, 1], np.int32)
    y = ref.max_pool(X, k, s, "SAME")
    dy = rand(*y.shape)
    ints = _rng.integers(-9, 9, (2, 5, 7, 3)).astype(np.int32)
    explicit = {"ksize": [1, 2, 3, 1], "strides": [1, 2, 1, 1], "padding": "EXPLICIT",
                "explicit_paddings": [0, 0, 1, 0, 1, 1, 0, 0]}
    return [
        OpCase("MaxPoolV2", op("MaxPoolV2", **attrs), [X, k, s],
               lambda x, k, s: ref.max_pool(x, list(k), list(s), "SAME")),
        OpCase("MaxPoolGradV2", op("MaxPoolGradV2", **attrs), [X, y, dy, k, s],
               lambda x, y, dy, k, s: ref.max_pool_grad(x, y, dy, list(k), list(s), "SAME")),
        OpCase("MaxPool", op("MaxPool", ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                             padding="SAME"), [ints],
               lambda x: ref.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), name="int32"),
        OpCase("MaxPool", op("MaxPool", **explicit), [X],
               lambda x: ref.max_pool(x, explicit["ksize"], explicit["strides"], "EXPLICIT",
                                      explicit=explicit["explicit_paddings"]), name="explicit"),
        OpCase("AvgPool", op("AvgPool", ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
                             padding="SAME"), [X64],
               lambda x: ref.avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), name="double"),
    ]


# -- batch norm ---------------------------------------------------------------------------------
def batch_norm_cases():
    scale, offset = rand(3, low=0.5), rand(3)
    mean, var = rand(3), rand(3, low=0.5, high=2.0)
    eps = 0.001
    empty = np.zeros((0,), np.float32)

    def train(v3=False, factor=1.0, fmt="NHWC"):
        def fn(x, s, o, m, v):
            outs = ref.batch_norm_train(x, s, o, eps, fmt, factor, m, v)
            outs = [o_.astype(np.float32) for o_ in outs]
            return outs + [empty] if v3 else outs
        return fn

    def infer(x, s, o, m, v):
        y = ref.batch_norm_infer(x, s, o, m, v, eps).astype(np.float32)
        return [y, m, v, m, v]

    base = {"epsilon": eps}
    x_nchw = nchw(X)
    return [
        OpCase("FusedBatchNorm", op("FusedBatchNorm", **base), [X, scale, offset, empty, empty],
               train(), rtol=1e-4, atol=1e-5),
        OpCase("FusedBatchNorm", op("FusedBatchNorm", is_training=False, **base),
               [X, scale, offset, mean, var], infer, rtol=1e-4, atol=1e-5, name="inference"),
        OpCase("FusedBatchNormV2", op("FusedBatchNormV2", **base),
               [X, scale, offset, empty, empty], train(), rtol=1e-4, atol=1e-5),
        OpCase("FusedBatchNormV3", op("FusedBatchNormV3", **base),
               [X, scale, offset, empty, empty], train(v3=True), rtol=1e-4, atol=1e-5,
               exact_static_shape=False),  # reserve_space_3 has no static shape, as in TF
        OpCase("FusedBatchNormV3", op("FusedBatchNormV3", exponential_avg_factor=0.25, **base),
               [X, scale, offset, mean, var], train(v3=True, factor=0.25), rtol=1e-4,
               atol=1e-5, name="avg_factor", exact_static_shape=False),
        OpCase("FusedBatchNormV3", op("FusedBatchNormV3", data_format="NCHW", **base),
               [x_nchw, scale, offset, empty, empty], train(v3=True, fmt="NCHW"), rtol=1e-4,
               atol=1e-5, name="NCHW", exact_static_shape=False),
        *_bn_grad_cases(scale, eps),
    ]


def _bn_grad_cases(scale, eps):
    """Gradient refs: the closed forms, written out in float64."""
    x, dy = X.astype(np.float64), G.astype(np.float64)
    mean, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    m32, v32 = mean.astype(np.float32), var.astype(np.float32)
    inv = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * inv
    n = x.size // 3
    d_offset, d_scale = dy.sum((0, 1, 2)), (dy * xhat).sum((0, 1, 2))
    dx_train = scale * inv * (dy - d_offset / n - xhat * d_scale / n)
    dx_infer = dy * scale * inv
    empty = np.zeros((0,), np.float32)

    def outs(dx):
        return lambda *_: [dx.astype(np.float32), d_scale.astype(np.float32),
                           d_offset.astype(np.float32), empty, empty]

    ins = [G, X, scale, m32, v32]
    kw = {"rtol": 1e-3, "atol": 1e-4}
    return [
        OpCase("FusedBatchNormGrad", op("FusedBatchNormGrad", epsilon=eps), ins,
               outs(dx_train), **kw),
        OpCase("FusedBatchNormGradV2", op("FusedBatchNormGradV2", epsilon=eps,
                                          is_training=False), ins, outs(dx_infer),
               name="inference", **kw),
        OpCase("FusedBatchNormGradV3", op("FusedBatchNormGradV3", epsilon=eps),
               [*ins, empty], outs(dx_train), **kw),
    ]


CASES = [*unary_cases(), *grad_cases(), *bias_cases(), *xent_cases(), *misc_cases(),
         *conv_cases(), *depthwise_cases(), *pool_cases(), *batch_norm_cases()]

EXEMPT: dict[str, str] = {}
