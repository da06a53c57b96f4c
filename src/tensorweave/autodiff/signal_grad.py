"""Gradients of the FFT ops (TF's ops/signal/fft_ops.py), with TF's complex convention: the
gradient of a real loss with respect to z is dL/dRe(z) + i dL/dIm(z).

FFT's gradient is IFFT(grad) * n (n the transform's size), IFFT's FFT(grad) / n. RFFT's is
n * IRFFT of the gradient with its interior frequencies halved (IRFFT counts them twice),
IRFFT's is RFFT(grad) / n with the interior frequencies doubled; both then crop or zero-pad
the inner dimensions back to the input's (the forward op padded or cropped them).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.autodiff.registry import RegisterGradient
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_ops,
    reduction_ops,
    slicing_ops,
)
from tensorweave.ops.apply import apply_op

_REAL_FOR = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _inner_size(x, rank: int, dtype):
    """The product of x's `rank` innermost dims, as `dtype` (real)."""
    dims = array_ops.shape(x)[-rank:]
    return math_ops.cast(reduction_ops.reduce_prod(dims), dtype)


def _complex_grad(inverse_type: str, rank: int, scale_up: bool):
    def grad_fn(op, grad):
        real = _REAL_FOR[grad.dtype.base_dtype]
        n = _inner_size(grad, rank, real)
        factor = n if scale_up else 1.0 / n
        return apply_op(inverse_type, grad) * math_ops.cast(factor, grad.dtype.base_dtype)
    return grad_fn


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    RegisterGradient("FFT" + _suffix)(_complex_grad("IFFT" + _suffix, _rank, True))
    RegisterGradient("IFFT" + _suffix)(_complex_grad("FFT" + _suffix, _rank, False))


def _last_mask(fft_length, interior, dtype):
    """[edge, interior, ..., interior, (edge if fft_length[-1] is even)] of length
    fft_length[-1] // 2 + 1, as `dtype` (edges are 1)."""
    n = math_ops.cast(fft_length[-1], dtypes.int32)
    half = n // 2 + 1
    k = creation_ops.range(half)
    is_edge = math_ops.logical_or(math_ops.equal(k, 0),
                                  math_ops.logical_and(math_ops.equal(k * 2, n),
                                                       math_ops.greater(k, 0)))
    ones = creation_ops.ones_like(k, dtype=dtype)
    return gather_ops.where(is_edge, ones, ones * interior)


def _fit_inner(x, target_inner, rank: int):
    """`x` with its `rank` innermost dims cropped or zero-padded to `target_inner`."""
    have = array_ops.shape(x)[-rank:]
    outer_rank = array_ops.rank(x) - rank
    extra = math_ops.maximum(target_inner - have, 0)
    zeros_outer = creation_ops.zeros(array_ops.reshape(outer_rank, [1]), dtypes.int32)
    pads = joining_ops.stack([joining_ops.concat([zeros_outer, creation_ops.zeros_like(extra)], 0),
                            joining_ops.concat([zeros_outer, extra], 0)], axis=1)
    padded = joining_ops.pad(x, pads)
    size = joining_ops.concat([zeros_outer - 1, target_inner], 0)
    return slicing_ops.slice(padded, creation_ops.zeros_like(size), size)


def _rfft_grad(irfft_type: str, rank: int):
    def grad_fn(op, grad):
        x, fft_length = op.inputs
        real = x.dtype.base_dtype
        mask = math_ops.cast(_last_mask(fft_length, 0.5, real), grad.dtype.base_dtype)
        n = math_ops.cast(reduction_ops.reduce_prod(fft_length), real)
        full = apply_op(irfft_type, grad * mask, fft_length, Treal=real,
                        Tcomplex=grad.dtype.base_dtype) * n
        return _fit_inner(full, array_ops.shape(x)[-rank:], rank), None
    return grad_fn


def _irfft_grad(rfft_type: str, rank: int):
    def grad_fn(op, grad):
        x, fft_length = op.inputs
        cplx = x.dtype.base_dtype
        real = grad.dtype.base_dtype
        mask = _last_mask(fft_length, 2.0, real)
        n = math_ops.cast(reduction_ops.reduce_prod(fft_length), real)
        spectrum = apply_op(rfft_type, grad, fft_length, Treal=real, Tcomplex=cplx)
        out = spectrum * math_ops.cast(mask / n, cplx)
        return _fit_inner(out, array_ops.shape(x)[-rank:], rank), None
    return grad_fn


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    RegisterGradient("RFFT" + _suffix)(_rfft_grad("IRFFT" + _suffix, _rank))
    RegisterGradient("IRFFT" + _suffix)(_irfft_grad("RFFT" + _suffix, _rank))

