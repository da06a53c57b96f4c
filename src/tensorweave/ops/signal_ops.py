"""The FFT ops (TF's core/ops/spectral_ops.cc): FFT/IFFT/FFT2D/IFFT2D/FFT3D/IFFT3D on complex
tensors, RFFT/IRFFT/RFFT2D/IRFFT2D/RFFT3D/IRFFT3D between real and complex ones.

Each transforms the innermost 1, 2 or 3 dimensions. The real transforms take `fft_length`
(an int32 vector, one entry per transformed dimension): RFFT crops or zero-pads each inner
dimension of its input to `fft_length` and returns only the `fft_length[-1] // 2 + 1` unique
frequencies of the last; IRFFT reads that many (cropped or zero-padded) and returns a real
tensor of inner shape `fft_length`. Kernels: runtime/kernels/cpu/signal.py (np.fft);
gradients: autodiff/signal_grad.py (TF's fft_ops.py).
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.shapes import TensorShape

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d", "irfft3d",
           "rfft", "rfft2d", "rfft3d"]

_COMPLEX_ATTR = "Tcomplex: {complex64, complex128} = DT_COMPLEX64"
_REAL_ATTR = "Treal: {float32, float64} = DT_FLOAT"
_REAL_FOR = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
_COMPLEX_FOR = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _inner_rank_shape(rank: int):
    def shape_fn(ctx) -> TensorShape:
        dims = ctx.input_dims(0)
        if dims is not None and len(dims) < rank:
            raise ctx.fail(f"Shape must be at least rank {rank} but is rank {len(dims)}")
        return ctx.input_shape(0)
    return shape_fn


def _real_fft_shape(rank: int, forward: bool):
    def shape_fn(ctx) -> TensorShape:
        dims = ctx.input_dims(0)
        if dims is not None and len(dims) < rank:
            raise ctx.fail(f"Shape must be at least rank {rank} but is rank {len(dims)}")
        length_dims = ctx.input_dims(1)
        if length_dims is not None and (len(length_dims) != 1 or
                                        length_dims[0] not in (None, rank)):
            raise ctx.fail(f"fft_length must be a vector of {rank} elements, got shape "
                           f"{ctx.input_shape(1)}")
        if dims is None:
            return TensorShape(None)
        lengths = ctx.constant_value(1)
        if lengths is None:
            inner = [None] * rank
        else:
            inner = [int(v) for v in lengths]
            if forward:
                inner[-1] = inner[-1] // 2 + 1
        return TensorShape(list(dims[:len(dims) - rank]) + inner)
    return shape_fn


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    for _name in ("FFT", "IFFT"):
        register_op(_name + _suffix, inputs=["input: Tcomplex"], outputs=["output: Tcomplex"],
                    attrs=[_COMPLEX_ATTR], shape_fn=_inner_rank_shape(_rank))
    register_op("RFFT" + _suffix, inputs=["input: Treal", "fft_length: int32"],
                outputs=["output: Tcomplex"], attrs=[_REAL_ATTR, _COMPLEX_ATTR],
                shape_fn=_real_fft_shape(_rank, True))
    register_op("IRFFT" + _suffix, inputs=["input: Tcomplex", "fft_length: int32"],
                outputs=["output: Treal"], attrs=[_REAL_ATTR, _COMPLEX_ATTR],
                shape_fn=_real_fft_shape(_rank, False))


def _complex_fn(op_type: str, tf_name: str):
    def fn(input, name=None):  # noqa: A002 - TF's argument name
        return apply_op(op_type, input, name=name)
    fn.__name__ = fn.__qualname__ = tf_name
    fn.__doc__ = (f"`tf.signal.{tf_name}`: the {op_type} of the innermost dimensions of a "
                  "complex64 or complex128 tensor (same shape and dtype).")
    return fn


def _real_fft_fn(op_type: str, tf_name: str, rank: int):
    forward = op_type.startswith("R")

    def fn(input_tensor, fft_length=None, name=None):
        x = convert_to_tensor(input_tensor, dtype_hint=dtypes.float32 if forward else
                              dtypes.complex64)
        if forward and not x.dtype.base_dtype.is_floating:
            x = convert_to_tensor(input_tensor, dtype=dtypes.float32)
        if fft_length is None:
            fft_length = _default_length(x, rank, forward)
        if forward:
            real, cplx = x.dtype.base_dtype, _COMPLEX_FOR.get(x.dtype.base_dtype)
        else:
            cplx, real = x.dtype.base_dtype, _REAL_FOR.get(x.dtype.base_dtype)
        return apply_op(op_type, x, convert_to_tensor(fft_length, dtype=dtypes.int32),
                        Treal=real, Tcomplex=cplx, name=name)
    fn.__name__ = fn.__qualname__ = tf_name
    fn.__doc__ = (f"`tf.signal.{tf_name}`: the {op_type} of the innermost {rank} "
                  "dimension(s); `fft_length` (int32, one entry per dimension) defaults to "
                  "the input's inner dims (IRFFT: 2 * (last - 1) for the last).")
    return fn


def _default_length(x, rank: int, forward: bool):
    """TF's default fft_length: the static inner dims (IRFFT: 2 * (n - 1) for the last)."""
    from tensorweave.ops import array_ops, joining_ops, math_ops

    dims = x.shape.as_tuple()
    if dims is not None and all(d is not None for d in dims[len(dims) - rank:]):
        inner = list(dims[len(dims) - rank:])
        if not forward:
            inner[-1] = 2 * (inner[-1] - 1)
        return inner
    inner = array_ops.shape(x)[-rank:]
    if forward:
        return inner
    last = 2 * (inner[-1] - 1)
    return joining_ops.concat([inner[:-1], math_ops.cast(array_ops.reshape(last, [1]),
                                                       dtypes.int32)], 0)


fft, ifft = _complex_fn("FFT", "fft"), _complex_fn("IFFT", "ifft")
fft2d, ifft2d = _complex_fn("FFT2D", "fft2d"), _complex_fn("IFFT2D", "ifft2d")
fft3d, ifft3d = _complex_fn("FFT3D", "fft3d"), _complex_fn("IFFT3D", "ifft3d")
rfft, irfft = _real_fft_fn("RFFT", "rfft", 1), _real_fft_fn("IRFFT", "irfft", 1)
rfft2d, irfft2d = _real_fft_fn("RFFT2D", "rfft2d", 2), _real_fft_fn("IRFFT2D", "irfft2d", 2)
rfft3d, irfft3d = _real_fft_fn("RFFT3D", "rfft3d", 3), _real_fft_fn("IRFFT3D", "irfft3d", 3)
