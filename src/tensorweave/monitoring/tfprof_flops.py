"""TF's "flops" statistics (python/profiler/internal/flops_registry.py and nn_ops.py's
Conv2D/BiasAdd/DepthwiseConv2dNative), one formula per op type over static shapes. An op
type without a formula, or a shape not fully known, counts 0, as tfprof counts it."""

from __future__ import annotations

import math


def _n(t) -> int:
    shape = t.shape
    if not shape.is_fully_defined():
        raise ValueError
    return math.prod(shape.as_list())


def _unary(per=1):
    return lambda op: _n(op.inputs[0]) * per


def _binary(per=1):
    return lambda op: _n(op.outputs[0]) * per


def _reduction(reduce_flops, finalize_flops):
    return lambda op: (_n(op.inputs[0]) * reduce_flops +
                       _n(op.outputs[0]) * (finalize_flops - reduce_flops))


def _matmul(op) -> int:
    a = op.inputs[0].shape.as_list()
    k = a[0] if op.get_attr("transpose_a") else a[1]
    return int(k) * _n(op.outputs[0]) * 2


def _batch_matmul(op) -> int:
    a = op.inputs[0].shape.as_list()
    adj = op.get_attr("adj_x")
    return int(a[-2] if adj else a[-1]) * _n(op.outputs[0]) * 2


def _nhwc(op) -> None:
    if op.get_attr("data_format") not in ("NHWC", b"NHWC"):
        raise ValueError


def _conv2d(op) -> int:
    fh, fw, cin, _ = op.inputs[1].shape.as_list()
    return _n(op.outputs[0]) * fh * fw * cin * 2


def _depthwise(op) -> int:
    fh, fw, _, _ = op.inputs[1].shape.as_list()
    return _n(op.outputs[0]) * fh * fw * 2


def _pool(op) -> int:
    _nhwc(op)
    return math.prod(op.get_attr("ksize")) * _n(op.outputs[0])


def _add_n(op) -> int:
    return _n(op.inputs[0]) * (len(op.inputs) - 1) if op.inputs else 0


FLOPS = {
    **{t: _unary() for t in ("Reciprocal", "Square", "Log", "Neg", "AssignSub", "AssignAdd",
                             "BiasAdd")},
    "Rsqrt": _unary(2), "Softmax": _unary(5),
    "L2Loss": lambda op: _n(op.inputs[0]) * 3 - 1,
    **{t: _binary() for t in ("Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
                              "Pow", "GreaterEqual", "Greater", "LessEqual", "Less", "Equal",
                              "NotEqual")},
    "RsqrtGrad": _binary(4), "SquaredDifference": _binary(2),
    "Mean": _reduction(1, 1),
    **{t: _reduction(1, 0) for t in ("Sum", "ArgMax", "ArgMin", "BiasAddGrad")},
    "AvgPool": _pool, "MaxPool": _pool, "AddN": _add_n, "MatMul": _matmul,
    **{t: _batch_matmul for t in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")},
    "Conv2D": _conv2d, "DepthwiseConv2dNative": _depthwise,
}


def float_ops(op) -> int:
    """The float operations of one run of `op` (0 when unknown)."""
    fn = FLOPS.get(op.type)
    if fn is None:
        return 0
    try:
        return int(fn(op))
    except (ValueError, TypeError):
        return 0


__all__ = ["FLOPS", "float_ops"]
