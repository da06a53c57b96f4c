"""Harness cases for the FFT ops (ops/signal_ops.py) against np.fft; TF's own numbers are
checked in tests/signal/test_signal.py."""

from __future__ import annotations

import numpy as np

from tensorweave.ops import signal_ops as so
from tests.ops.harness import OpCase

_RNG = np.random.default_rng(5)
_C64 = (_RNG.standard_normal((2, 3, 4)) + 1j * _RNG.standard_normal((2, 3, 4))).astype(
    np.complex64)
_C128 = _RNG.standard_normal((3, 4, 5)) + 1j * _RNG.standard_normal((3, 4, 5))
_R32 = _RNG.standard_normal((2, 3, 6)).astype(np.float32)


def _complex_cases():
    out = []
    for name, fn, ref, rank in (("FFT", so.fft, np.fft.fftn, 1), ("IFFT", so.ifft, np.fft.ifftn, 1),
                                ("FFT2D", so.fft2d, np.fft.fftn, 2),
                                ("IFFT2D", so.ifft2d, np.fft.ifftn, 2),
                                ("FFT3D", so.fft3d, np.fft.fftn, 3),
                                ("IFFT3D", so.ifft3d, np.fft.ifftn, 3)):
        axes = tuple(range(-rank, 0))
        for x, tag in ((_C64, "c64"), (_C128, "c128")):
            out.append(OpCase(name, fn, [x], lambda a, r=ref, ax=axes, d=x.dtype:
                              r(a, axes=ax).astype(d), name=tag))
    return out


def _real_cases():
    out = []
    for name, fn, rank, lengths in (("RFFT", so.rfft, 1, [5]), ("RFFT2D", so.rfft2d, 2, [4, 6]),
                                    ("RFFT3D", so.rfft3d, 3, [2, 3, 7])):
        axes = tuple(range(-rank, 0))
        out.append(OpCase(name, lambda a, f=fn, n=lengths: f(a, n), [_R32],
                          lambda a, n=lengths, ax=axes: np.fft.rfftn(a, n, ax).astype(
                              np.complex64)))
        out.append(OpCase(name, lambda a, f=fn, n=lengths: f(a, n), [_R32.astype(np.float64)],
                          lambda a, n=lengths, ax=axes: np.fft.rfftn(a, n, ax), name="f64"))
    for name, fn, rank, lengths in (("IRFFT", so.irfft, 1, [7]),
                                    ("IRFFT2D", so.irfft2d, 2, [4, 6]),
                                    ("IRFFT3D", so.irfft3d, 3, [2, 3, 8])):
        axes = tuple(range(-rank, 0))
        for x, tag in ((_C64, "c64"), (_C128, "c128")):
            real = np.float32 if x.dtype == np.complex64 else np.float64
            out.append(OpCase(name, lambda a, f=fn, n=lengths: f(a, n), [x],
                              lambda a, n=lengths, ax=axes, d=real:
                              np.fft.irfftn(a, n, ax).astype(d), name=tag))
    return out


CASES = _complex_cases() + _real_cases()
