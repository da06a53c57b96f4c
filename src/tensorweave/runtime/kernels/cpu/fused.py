"""Kernels of the fused ops: the base kernel, then bias/activation applied in place on its
fresh output (never on an input).

float32 bias + Relu/Relu6 (or either alone) take one compiled pass (`conv_impl.bias_act`);
a base kernel that can fuse them itself (Conv2D: its direct loop for inputs of few channels)
receives them as two extra arguments, `base(a, b, bias, act)`.
"""

import numpy as np

from tensorweave.runtime.kernels.cpu import conv_impl, native, parallel
from tensorweave.runtime.kernels.cpu.nn import add_bias_rows
from tensorweave.runtime.kernels.registry import KernelNode, lookup_kernel, register_kernel


def _activation(name: str, alpha: float):
    if name == "Relu":
        return lambda y: np.maximum(y, 0, out=y)
    if name == "Relu6":
        return lambda y: np.clip(y, 0, 6, out=y)
    if name == "Elu":
        return _elu_inplace
    if name == "LeakyRelu":
        return lambda y: np.maximum(y, alpha * y, out=y)
    if name == "Tanh":
        return lambda y: np.tanh(y, out=y)
    if name == "Sigmoid":
        return _sigmoid_inplace
    raise ValueError(f"unsupported fused activation {name}")


def _elu_inplace(y):
    y[...] = np.where(y > 0, y, np.expm1(np.minimum(y, 0)))
    return y


def _sigmoid_inplace(y):
    np.negative(y, out=y)
    np.exp(y, out=y)
    y += 1
    return np.reciprocal(y, out=y)


def _blockable(y: np.ndarray, bias) -> bool:
    """Whether bias + activation can run split over threads (`add_bias_rows`)."""
    b = np.asarray(bias)
    return y.size >= parallel.MIN_PARALLEL and y.flags.c_contiguous and b.ndim == 1 and \
        y.ndim >= 1 and b.shape[0] == y.shape[-1] and b.dtype == y.dtype


_NATIVE_ACTS = (None, "Relu", "Relu6")
_TAKES_EPILOGUE = frozenset({"Conv2D"})


def _fused(base_op: str, base_attrs: tuple[str, ...]):
    def factory(node):
        attrs = {k: v for k, v in node.attrs.items() if k in base_attrs}
        base = lookup_kernel(base_op).factory(KernelNode(
            node.name, base_op, attrs, node.input_dtypes[:2], node.output_dtypes,
            node.device, node.resources))
        ops = list(node.attr("fused_ops"))
        with_bias = bool(ops) and ops[0] in ("BiasAdd", "Add")
        act_name = ops[-1] if ops and ops[-1] not in ("BiasAdd", "Add") else None
        act = _activation(act_name, node.attr("leakyrelu_alpha")) if act_name else None
        one_pass = node.output_dtypes[0].np_dtype == np.float32 and act_name in _NATIVE_ACTS
        in_base = one_pass and base_op in _TAKES_EPILOGUE

        def run(a, b, *args):
            bias = _one_pass_bias(args[0] if with_bias else None) if one_pass else False
            if in_base and bias is not False:
                return base(a, b, bias, act_name)
            y = np.asarray(base(a, b))
            if not y.flags.writeable:
                y = y.copy()
            if bias is not False and (bias is None or bias.shape == y.shape[-1:]) and y.ndim:
                return conv_impl.bias_act(y, bias, act_name)
            if with_bias and _blockable(y, args[0]):
                return add_bias_rows(y, args[0], out=y, then=act)
            if with_bias:
                np.add(y, args[0], out=y)
            return act(y) if act is not None else y

        return run

    return factory


def _one_pass_bias(bias):
    """The bias as the one-pass epilogue takes it (None for no bias); False when it cannot."""
    if bias is None:
        return None
    b = np.asarray(bias)
    return b if b.ndim == 1 and native.usable(b) else False


register_kernel("_FusedMatMul")(_fused("MatMul", ("transpose_a", "transpose_b", "T")))
register_kernel("_FusedConv2D")(_fused("Conv2D", (
    "T", "strides", "padding", "explicit_paddings", "data_format", "dilations",
    "use_cudnn_on_gpu")))

_UNARY_INPLACE = {
    "Sin": np.sin, "Cos": np.cos, "Tanh": np.tanh, "Exp": np.exp, "Log": np.log,
    "Sqrt": np.sqrt, "Square": np.square, "Neg": np.negative, "Abs": np.abs,
    "Floor": np.floor, "Ceil": np.ceil, "Reciprocal": np.reciprocal, "Log1p": np.log1p,
    "Expm1": np.expm1,
}
_EXTRA = {"Relu": lambda y: np.maximum(y, 0, out=y), "Sigmoid": _sigmoid_inplace}
FUSIBLE_UNARY = frozenset(_UNARY_INPLACE) | frozenset(_EXTRA)


@register_kernel("_TwFusedElementwise")
def _fused_elementwise(node):
    fns = [_UNARY_INPLACE.get(op) for op in node.attr("ops")]
    extras = [_EXTRA.get(op) for op in node.attr("ops")]
    first, first_extra = fns[0], extras[0]
    steps = list(zip(fns[1:], extras[1:]))

    def run(x):
        y = first(x) if first is not None else first_extra(np.array(x, copy=True))
        y = np.asarray(y)
        if y.ndim == 0:  # a 0-d result is a scalar: no buffer to reuse
            for f, e in steps:
                y = f(y) if f is not None else e(np.array(y))
            return np.asarray(y, dtype=x.dtype)
        for f, e in steps:
            if f is not None:
                f(y, out=y)
            else:
                e(y)
        return y

    return run
