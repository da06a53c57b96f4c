"""3-D convolution and pooling in the harness; naive-loop references for the forward ops
(TF's values and gradients: tests/ops/test_math_extra.py)."""

import itertools

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

_R = np.random.default_rng(5)
_X = _R.normal(size=(1, 3, 4, 5, 2)).astype(np.float32)
_W = _R.normal(size=(2, 2, 3, 2, 3)).astype(np.float32)
_ONES = [1, 1, 1, 1, 1]
_K = [1, 2, 2, 2, 1]


def _conv_ref(x, w):
    n, d, h, wd, _ = x.shape
    kd, kh, kw, _, o = w.shape
    out = np.zeros((n, d - kd + 1, h - kh + 1, wd - kw + 1, o), np.float32)
    for i, j, k in itertools.product(*[range(s) for s in out.shape[1:4]]):
        out[:, i, j, k] = np.einsum("ndhwc,dhwco->no", x[:, i:i + kd, j:j + kh, k:k + kw], w)
    return out


def _pool_ref(fn):
    def ref(x):
        out = np.zeros((1, 1, 2, 2, 2), np.float32)
        for i, j, k in itertools.product(range(1), range(2), range(2)):
            out[:, i, j, k] = fn(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, 2 * k:2 * k + 2],
                                 axis=(1, 2, 3))
        return out

    return ref


_CONV = {"strides": _ONES, "padding": "VALID"}
_POOL = {"ksize": _K, "strides": _K, "padding": "VALID"}
_DY = _R.normal(size=(1, 2, 3, 3, 3)).astype(np.float32)
CASES = [
    OpCase("Conv3D", lambda x, w: apply_op("Conv3D", x, w, **_CONV), [_X, _W], _conv_ref,
           rtol=1e-4, atol=1e-5),
    OpCase("Conv3DBackpropInputV2",
           lambda s, w, dy: apply_op("Conv3DBackpropInputV2", s, w, dy, **_CONV),
           [np.array(_X.shape, np.int32), _W, _DY], None, exact_static_shape=False),
    OpCase("Conv3DBackpropFilterV2",
           lambda x, s, dy: apply_op("Conv3DBackpropFilterV2", x, s, dy, **_CONV),
           [_X, np.array(_W.shape, np.int32), _DY], None, exact_static_shape=False),
    OpCase("MaxPool3D", lambda x: apply_op("MaxPool3D", x, **_POOL), [_X], _pool_ref(np.max)),
    OpCase("AvgPool3D", lambda x: apply_op("AvgPool3D", x, **_POOL), [_X], _pool_ref(np.mean),
           rtol=1e-5, atol=1e-6),
    OpCase("MaxPool3DGrad",
           lambda x, y, g: apply_op("MaxPool3DGrad", x, y, g, **_POOL),
           [_X, _pool_ref(np.max)(_X), np.ones((1, 1, 2, 2, 2), np.float32)], None),
    OpCase("AvgPool3DGrad", lambda s, g: apply_op("AvgPool3DGrad", s, g, **_POOL),
           [np.array(_X.shape, np.int32), np.ones((1, 1, 2, 2, 2), np.float32)], None,
           exact_static_shape=False),
]

EXEMPT: dict = {}
