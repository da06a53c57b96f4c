"""CPU kernels for the gradient helper ops of ops/grad_ops.py."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.ops.grad_ops import MASKS, broadcast_gradient_args
from tensorweave.ops.strided_slice_spec import StridedSliceError, validate
from tensorweave.runtime.kernels.registry import register_kernel

_UNARY_GRAD = {
    "SigmoidGrad": lambda y, dy: dy * np.conj(y * (1 - y)),
    "TanhGrad": lambda y, dy: dy * np.conj(1 - y * y),
    "SqrtGrad": lambda y, dy: dy * 0.5 / np.conj(y),
    "RsqrtGrad": lambda y, dy: dy * -0.5 * np.conj(y * y * y),
    "ReciprocalGrad": lambda y, dy: -dy * np.conj(y * y),
    "InvGrad": lambda y, dy: -dy * np.conj(y * y),
}


def _unary_grad_factory(fn):
    def factory(node):
        dt = dtypes.as_dtype(node.output_dtypes[0]).base_dtype.np_dtype

        def run(y, dy):
            return np.asarray(fn(np.asarray(y), np.asarray(dy)), dtype=dt)

        return run

    return factory


for _name, _fn in _UNARY_GRAD.items():
    register_kernel(_name)(_unary_grad_factory(_fn))


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(node):
    dt = dtypes.as_dtype(node.output_dtypes[0]).base_dtype.np_dtype

    def run(s0, s1):
        try:
            r0, r1 = broadcast_gradient_args(np.asarray(s0).tolist(), np.asarray(s1).tolist())
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        return np.asarray(r0, dt), np.asarray(r1, dt)

    return run


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(node):
    masks = {k: node.attr(k) for k in MASKS}
    dt = dtypes.as_dtype(node.output_dtypes[0]).base_dtype.np_dtype

    def run(shape, begin, end, strides, dy):
        dims = tuple(int(d) for d in np.asarray(shape).tolist())
        try:
            dense = validate(np.asarray(begin).tolist(), np.asarray(end).tolist(),
                             np.asarray(strides).tolist(), dims, **masks)
        except StridedSliceError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        if tuple(np.shape(dy)) != tuple(dense.final_shape):
            raise errors.InvalidArgumentError(
                None, None, f"shape of dy was {list(np.shape(dy))} instead of "
                f"{list(dense.final_shape)}")
        out = np.zeros(dims, dt)
        out[dense.index] = dy
        return out

    return run
