"""`tf.signal` (and TF1's `tf.spectral`): FFTs (ops/signal_ops.py) and the framing, window,
STFT, mel and MFCC functions (ops/spectral_ops.py)."""

from tensorweave.ops.signal_ops import (
                                        fft,
                                        fft2d,
                                        fft3d,
                                        ifft,
                                        ifft2d,
                                        ifft3d,
                                        irfft,
                                        irfft2d,
                                        irfft3d,
                                        rfft,
                                        rfft2d,
                                        rfft3d,
)
from tensorweave.ops.spectral_ops import (
                                        dct,
                                        frame,
                                        hamming_window,
                                        hann_window,
                                        inverse_stft,
                                        inverse_stft_window_fn,
                                        linear_to_mel_weight_matrix,
                                        mfccs_from_log_mel_spectrograms,
                                        overlap_and_add,
                                        stft,
)

__all__ = ["dct", "fft", "fft2d", "fft3d", "frame", "hamming_window", "hann_window", "ifft",
           "ifft2d", "ifft3d", "inverse_stft", "inverse_stft_window_fn", "irfft", "irfft2d",
           "irfft3d", "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms",
           "overlap_and_add", "rfft", "rfft2d", "rfft3d", "stft"]
