"""CPU kernels for the FFT ops (ops/signal_ops.py) on np.fft.

numpy transforms in complex128/float64; results are rounded to the op's output dtype
(complex64 for complex64 inputs, as TF). RFFT crops or zero-pads each inner dimension to
`fft_length`; IRFFT reads `fft_length[-1] // 2 + 1` frequencies of the last dimension and
`fft_length[i]` of the others, cropping or zero-padding, and (as TF's pocketfft) ignores the
imaginary parts of the DC and Nyquist terms.
"""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import fmt_shape, invalid, out_np
from tensorweave.runtime.kernels.registry import register_kernel

_TRANSFORMS = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn}


def _axes(x: np.ndarray, rank: int, node) -> tuple:
    if x.ndim < rank:
        raise invalid(f"Input must have rank of at least {rank} but got: {fmt_shape(x.shape)}")
    return tuple(range(x.ndim - rank, x.ndim))


def _complex_kernel(kind: str, rank: int):
    transform = _TRANSFORMS[kind]

    def factory(node):
        dt = out_np(node)

        def run(x):
            x = np.asarray(x)
            axes = _axes(x, rank, node)
            if x.size == 0:
                return np.zeros(x.shape, dt)
            return transform(x, axes=axes).astype(dt, copy=False)
        return run
    return factory


def _lengths(fft_length, rank: int) -> list:
    lengths = np.asarray(fft_length)
    if lengths.shape != (rank,):
        raise invalid(f"fft_length must be a vector of {rank} elements, got shape "
                      f"{fmt_shape(lengths.shape)}")
    if (lengths < 0).any():
        raise invalid(f"fft_length must be non-negative: {lengths.tolist()}")
    return [int(v) for v in lengths]


def _real_kernel(forward: bool, rank: int):
    def factory(node):
        dt = out_np(node)

        def run(x, fft_length):
            x = np.asarray(x)
            axes = _axes(x, rank, node)
            s = _lengths(fft_length, rank)
            inner = list(s)
            if forward:
                inner[-1] = s[-1] // 2 + 1
            shape = x.shape[:x.ndim - rank] + tuple(inner)
            if 0 in shape or 0 in s:
                return np.zeros(shape, dt)
            if forward:
                return np.fft.rfftn(x, s=s, axes=axes).astype(dt, copy=False)
            return np.fft.irfftn(x, s=s, axes=axes).astype(dt, copy=False)
        return run
    return factory


for _rank, _suffix in ((1, ""), (2, "2D"), (3, "3D")):
    for _kind in ("FFT", "IFFT"):
        register_kernel(_kind + _suffix)(_complex_kernel(_kind, _rank))
    register_kernel("RFFT" + _suffix)(_real_kernel(True, _rank))
    register_kernel("IRFFT" + _suffix)(_real_kernel(False, _rank))
