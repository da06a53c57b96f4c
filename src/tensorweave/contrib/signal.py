"""`tf.contrib.signal` (TF 1.x before `tf.signal`): the same functions."""

from tensorweave.ops.spectral_ops import (
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

__all__ = ["frame", "hamming_window", "hann_window", "inverse_stft", "inverse_stft_window_fn",
           "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms", "overlap_and_add",
           "stft"]
