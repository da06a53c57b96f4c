"""TF's Python-level `tf.signal` functions (ops/signal/{shape_ops, window_ops, spectral_ops,
mel_ops, dct_ops, mfcc_ops}.py), built from existing ops and the FFT ops of signal_ops.py:
`frame`, `overlap_and_add`, `hann_window`, `hamming_window`, `stft`, `inverse_stft`,
`inverse_stft_window_fn`, `linear_to_mel_weight_matrix`, `dct` (type 2) and
`mfccs_from_log_mel_spectrograms`. They differentiate through the ops they build.
"""

from __future__ import annotations

import math

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import (
    array_ops,
    creation_ops,
    gather_ops,
    joining_ops,
    math_ops,
    reduction_ops,
    signal_ops,
)

__all__ = ["dct", "frame", "hamming_window", "hann_window", "inverse_stft",
           "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "overlap_and_add", "stft"]


def _static_int(value):
    """`value` as a Python int when it is known before running, else None."""
    from tensorweave.ops.shape_inference import constant_value

    if isinstance(value, (int, np.integer)):
        return int(value)
    v = constant_value(convert_to_tensor(value, dtype=dtypes.int32))
    return None if v is None else int(v)


def _frame_count(length, frame_length, frame_step, pad_end: bool):
    """Number of frames (Python ints in, Python int out; tensors in, tensor out)."""
    if pad_end:
        return -(-length // frame_step) if isinstance(length, int) else \
            (length + frame_step - 1) // frame_step
    if isinstance(length, int):
        return max(0, 1 + (length - frame_length) // frame_step)
    return math_ops.maximum(0, 1 + (length - frame_length) // frame_step)


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Slides a window of `frame_length` samples, `frame_step` apart, over `axis` of `signal`:
    that axis becomes [frames, frame_length] (TF's `tf.signal.frame`). With `pad_end` the end
    is padded with `pad_value` so that every sample starts within a frame."""
    with name_scope(name, "frame", [signal, frame_length, frame_step, pad_value]):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is None:
            raise ValueError("frame: the signal's rank must be known")
        axis = axis + rank if axis < 0 else axis
        fl, fs = _static_int(frame_length), _static_int(frame_step)
        dims = signal.shape.as_tuple()
        length = dims[axis] if dims[axis] is not None and fl is not None and fs is not None \
            else array_ops.shape(signal)[axis]
        fl_v = frame_length if fl is None else fl
        fs_v = frame_step if fs is None else fs
        num = _frame_count(length, fl_v, fs_v, pad_end)
        if pad_end:
            total = num * fs_v + fl_v - fs_v
            extra = max(0, total - length) if isinstance(total, int) else \
                math_ops.maximum(0, total - length)
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, extra]
            if not isinstance(extra, int):
                paddings = joining_ops.stack([joining_ops.stack(
                    [convert_to_tensor(a, dtype=dtypes.int32) for a in p]) for p in paddings])
            signal = joining_ops.pad(signal, paddings, constant_values=pad_value)
        if isinstance(num, int):
            indices = (fs_v * np.arange(num)[:, None] + np.arange(fl_v)[None, :]).astype(np.int32)
            indices = indices.reshape(num, fl_v)
        else:
            starts = creation_ops.range(num) * fs_v
            indices = array_ops.expand_dims(starts, 1) + \
                array_ops.expand_dims(creation_ops.range(fl_v), 0)
        return gather_ops.gather(signal, indices, axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """Sums overlapping frames: [..., frames, frame_length] → [..., (frames - 1) * frame_step
    + frame_length] (TF's `tf.signal.overlap_and_add`)."""
    with name_scope(name, "overlap_and_add", [signal, frame_step]):
        signal = convert_to_tensor(signal, name="signal")
        rank = signal.shape.ndims
        if rank is not None and rank < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {rank}")
        shape = array_ops.shape(signal)
        frames, fl = shape[-2], shape[-1]
        out_len = (frames - 1) * frame_step + fl
        flat = array_ops.reshape(signal, joining_ops.stack([-1, frames * fl]))
        ids = array_ops.reshape(array_ops.expand_dims(creation_ops.range(frames) * frame_step, 1)
                                + array_ops.expand_dims(creation_ops.range(fl), 0), [-1])
        summed = reduction_ops.unsorted_segment_sum(joining_ops.transpose(flat), ids, out_len)
        out_shape = joining_ops.concat([shape[:-2], array_ops.reshape(out_len, [1])], 0)
        out = array_ops.reshape(joining_ops.transpose(summed), out_shape)
        dims, fs = signal.shape.as_tuple(), _static_int(frame_step)
        if dims is not None and None not in dims[-2:] and fs is not None:
            out.set_shape(list(dims[:-2]) + [(dims[-2] - 1) * fs + dims[-1]])
        elif dims is not None:
            out.set_shape(list(dims[:-2]) + [None])
        return out


def _raised_cosine(name, window_length, periodic, dtype, a, b):
    with name_scope(name, name, [window_length, periodic]):
        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise ValueError(f"dtype must be a floating point type. Found {dtype}")
        length = _static_int(window_length)
        if length == 1:
            return creation_ops.ones([1], dtype)
        wl = window_length if length is None else length
        wl_t = convert_to_tensor(wl, dtype=dtypes.int32)
        even = 1 - math_ops.mod(wl_t, 2)
        n = math_ops.cast(wl_t + int(bool(periodic)) * even - 1, dtype)
        count = math_ops.cast(creation_ops.range(wl_t), dtype)
        window = a - b * math_ops.cos(2.0 * np.pi * count / n)
        if length is None:
            from tensorweave.ops import control_flow_ops

            return control_flow_ops.cond(math_ops.equal(wl_t, 1),
                                         lambda: creation_ops.ones([1], dtype), lambda: window)
        return window


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N) (TF's `tf.signal.hann_window`)."""
    return _raised_cosine(name or "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N) (TF's `tf.signal.hamming_window`)."""
    return _raised_cosine(name or "hamming_window", window_length, periodic, dtype, 0.54, 0.46)


def _default_fft_length(frame_length: int) -> int:
    return 1 << int(math.ceil(math.log2(frame_length)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window,
         pad_end=False, name=None):
    """Short-time Fourier transform of real `signals` [..., samples] → complex [..., frames,
    fft_length // 2 + 1] (TF's `tf.signal.stft`; fft_length defaults to the smallest power of
    2 holding a frame)."""
    with name_scope(name, "stft", [signals, frame_length, frame_step]):
        signals = convert_to_tensor(signals, name="signals")
        frame_length = _static_int(frame_length)
        if fft_length is None:
            fft_length = _default_fft_length(frame_length)
        framed = frame(signals, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            framed = framed * window_fn(frame_length, dtype=signals.dtype.base_dtype)
        return signal_ops.rfft(framed, [fft_length])


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """A window function that makes `inverse_stft` invert `stft` with `forward_window_fn`
    (TF's `tf.signal.inverse_stft_window_fn`): the forward window over the sum of the squared
    windows overlapping each sample."""
    def window_fn(frame_length, dtype):
        with name_scope(name, "inverse_stft_window_fn", [forward_window_fn]):
            fl, fs = _static_int(frame_length), _static_int(frame_step)
            forward = forward_window_fn(fl, dtype=dtype)
            denom = math_ops.square(forward)
            overlaps = -(-fl // fs)
            denom = joining_ops.pad(denom, [(0, overlaps * fs - fl)])
            denom = array_ops.reshape(denom, [overlaps, fs])
            denom = reduction_ops.reduce_sum(denom, 0, keepdims=True)
            denom = joining_ops.tile(denom, [overlaps, 1])
            denom = array_ops.reshape(denom, [overlaps * fs])
            return forward / denom[:fl]
    return window_fn


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window,
                 name=None):
    """The inverse of `stft`: complex [..., frames, fft_length // 2 + 1] → real [...,
    samples] by IRFFT, windowing and overlap-add (TF's `tf.signal.inverse_stft`)."""
    with name_scope(name, "inverse_stft", [stfts]):
        stfts = convert_to_tensor(stfts, name="stfts")
        frame_length = _static_int(frame_length)
        if fft_length is None:
            fft_length = _default_fft_length(frame_length)
        real_frames = signal_ops.irfft(stfts, [fft_length])
        if fft_length < frame_length:
            rank = real_frames.shape.ndims
            real_frames = joining_ops.pad(real_frames, [[0, 0]] * (rank - 1) +
                                          [[0, frame_length - fft_length]])
        real_frames = real_frames[..., :frame_length]
        if window_fn is not None:
            real_frames = real_frames * window_fn(frame_length,
                                                  dtype=stfts.dtype.real_dtype)
        return overlap_and_add(real_frames, frame_step)


def _hertz_to_mel(f):
    return 1127.0 * np.log1p(f / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0,
                                dtype=dtypes.float32, name=None):
    """The [num_spectrogram_bins, num_mel_bins] matrix of triangular mel filters (HTK's mel
    scale, 1127 ln(1 + f / 700)); row 0 (DC) is zero (TF's
    `tf.signal.linear_to_mel_weight_matrix`)."""
    dtype = dtypes.as_dtype(dtype)
    if num_mel_bins <= 0 or num_spectrogram_bins <= 0 or sample_rate <= 0:
        raise ValueError("num_mel_bins, num_spectrogram_bins and sample_rate must be positive")
    if lower_edge_hertz < 0.0 or lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz} must be non-negative and below "
                         f"upper_edge_hertz {upper_edge_hertz}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency "
                         f"(sample_rate / 2). Got {upper_edge_hertz} for sample_rate: "
                         f"{sample_rate}")
    dt = dtype.np_dtype
    with name_scope(name, "linear_to_mel_weight_matrix"):
        linear = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins)[1:]
        bins_mel = _hertz_to_mel(linear.astype(dt))[:, None]
        edges = np.linspace(_hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz),
                            num_mel_bins + 2).astype(dt)
        lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
        lower_slopes = (bins_mel - lower) / (center - lower)
        upper_slopes = (upper - bins_mel) / (upper - center)
        weights = np.maximum(0.0, np.minimum(lower_slopes, upper_slopes))
        weights = np.pad(weights, [[1, 0], [0, 0]]).astype(dt)
        return convert_to_tensor(weights, dtype=dtype, name="linear_to_mel_weight_matrix")


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002 - TF's names
    """The type-II discrete cosine transform of the last axis, through an RFFT of twice its
    length (TF's `tf.signal.dct`; `norm` None or "ortho")."""
    if type != 2 or n is not None or axis != -1:
        raise NotImplementedError("dct: only type=2, n=None, axis=-1 are supported")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    with name_scope(name, "dct", [input]):
        x = convert_to_tensor(input, name="input")
        length = x.shape.as_tuple()[-1]
        if length is None:
            raise ValueError("dct: the last dimension must be known")
        real = x.dtype.base_dtype
        cplx = dtypes.complex128 if real == dtypes.float64 else dtypes.complex64
        k = np.arange(length)
        scale = (2.0 * np.exp(-1j * np.pi * k / (2.0 * length))).astype(cplx.np_dtype)
        spectrum = signal_ops.rfft(x, [2 * length])[..., :length]
        out = math_ops.real(spectrum * scale)
        if norm == "ortho":
            weights = np.full([length], math.sqrt(2.0) * 0.5 / math.sqrt(length))
            weights[0] = 0.5 / math.sqrt(length)
            out = out * weights.astype(real.np_dtype)
        return out


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients: the DCT-II of each log-mel frame scaled by
    1 / sqrt(2 * num_mel_bins) (TF's `tf.signal.mfccs_from_log_mel_spectrograms`)."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        num_mel_bins = x.shape.as_tuple()[-1]
        if num_mel_bins is None:
            raise ValueError("mfccs: the number of mel bins must be known")
        return dct(x, type=2) * math_ops.cast(1.0 / math.sqrt(2.0 * num_mel_bins),
                                              x.dtype.base_dtype)
