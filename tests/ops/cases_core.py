"""Cases for the ops the runtime itself owns."""

import numpy as np

import tensorweave as tf
from tensorweave.ops.apply import apply_op
from tests.ops import nn_reference as ref
from tests.ops.harness import OpCase

_RNG = np.random.default_rng(7)
_A = _RNG.standard_normal((3, 4)).astype(np.float32)
_B = _RNG.standard_normal((4, 5)).astype(np.float32)
_BIAS = _RNG.standard_normal(5).astype(np.float32)
_IMG = _RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)
_FILTER = _RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)
_CBIAS = _RNG.standard_normal(4).astype(np.float32)


def _conv_ref(x, w):
    """SAME, stride 1: direct loops (independent of the Conv2D kernel)."""
    kh, kw = w.shape[:2]
    ph, pw = (kh - 1) // 2, (kw - 1) // 2
    xp = np.pad(x, ((0, 0), (ph, kh - 1 - ph), (pw, kw - 1 - pw), (0, 0)))
    out = np.zeros(x.shape[:3] + (w.shape[3],), np.float32)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nhwc,cd->nhwd", xp[:, i:i + x.shape[1], j:j + x.shape[2]], w[i, j])
    return out

CASES = [
    OpCase("Const", lambda: tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3)), [],
           lambda: np.arange(6, dtype=np.float32).reshape(2, 3)),
    OpCase("Identity", tf.identity, [np.ones((2, 3), np.float32)], lambda x: x),
    OpCase("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, [2, 3]),
           [np.ones((2, 3), np.float32)], lambda x: x),
]

CASES += [
    OpCase("_FusedMatMul",
           lambda a, b, c: apply_op("_FusedMatMul", a, b, [c], fused_ops=["BiasAdd", "Relu"]),
           [_A, _B, _BIAS], lambda a, b, c: np.maximum(a @ b + c, 0), rtol=1e-5),
    OpCase("_FusedMatMul", lambda a, b, c: apply_op("_FusedMatMul", a, b, [c],
                                                    transpose_b=True, fused_ops=["BiasAdd"]),
           [_A, _B.T.copy(), _BIAS], lambda a, b, c: a @ b.T + c, name="transpose_b"),
    OpCase("_FusedConv2D",
           lambda x, w, c: apply_op("_FusedConv2D", x, w, [c], strides=[1, 1, 1, 1],
                                    padding="SAME", fused_ops=["BiasAdd", "Relu"]),
           [_IMG, _FILTER, _CBIAS], lambda x, w, c: np.maximum(_conv_ref(x, w) + c, 0),
           rtol=1e-4, atol=1e-4, exact_static_shape=False),
    OpCase("_TwFusedElementwise",
           lambda x: apply_op("_TwFusedElementwise", x, ops=["Sin", "Square", "Relu", "Tanh"]),
           [_A], lambda x: np.tanh(np.maximum(np.square(np.sin(x)), 0))),
    OpCase("_TwFusedElementwise", lambda x: apply_op("_TwFusedElementwise", x,
                                                     ops=["Neg", "Sigmoid"]),
           [_A.astype(np.float64)], lambda x: 1 / (1 + np.exp(x)), name="float64"),
]

_POOLED = np.maximum(_RNG.standard_normal((2, 6, 5, 3)), 0).astype(np.float32)
_POOL_ARGS = {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
_POOL_OUT = ref.max_pool(_POOLED, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
_POOL_DY = _RNG.standard_normal(_POOL_OUT.shape).astype(np.float32)


def _pool_grad_relu_grad_ref(x, y, dy):
    return ref.max_pool_grad(x, y, dy, [1, 2, 2, 1], [1, 2, 2, 1], "SAME") * (x > 0)


CASES += [
    OpCase("_TwFusedMaxPoolGradReluGrad",
           lambda x, y, g: apply_op("_TwFusedMaxPoolGradReluGrad", x, y, g, **_POOL_ARGS),
           [_POOLED, _POOL_OUT, _POOL_DY], _pool_grad_relu_grad_ref),
    OpCase("_TwFusedMaxPoolGradReluGrad",
           lambda x, y, g: apply_op("_TwFusedMaxPoolGradReluGrad", x, y, g, **_POOL_ARGS),
           [_POOLED.astype(np.float64), _POOL_OUT.astype(np.float64),
            _POOL_DY.astype(np.float64)], _pool_grad_relu_grad_ref, name="float64"),
]

EXEMPT = {
    "_Send": "tests/master/test_multi_device.py (every cross-device edge)",
    "_Recv": "tests/master/test_multi_device.py (every cross-device edge)",
    "_HostSend": "same kernel as _Send: tests/master/test_multi_device.py",
    "_HostRecv": "same kernel as _Recv: tests/master/test_multi_device.py",
    "_Arg": "tests/runtime/test_executor.py (every feed)",
    "_Retval": "tests/runtime/test_executor.py (every fetch)",
    "Placeholder": "tests/client/test_session.py (feeding)",
    "XlaLaunch": "made by the mark_for_compilation pass, with its function and jax: "
                 "tests/master/test_mark_for_compilation.py",
}
