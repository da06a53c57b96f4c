"""The graph of tf.signal calls that make_signal_expected.py runs with TensorFlow and
test_signal.py with tensorweave: `build(tf, data)` returns {name: tensor}."""


def build(tf, data):
    S = tf.signal
    x, x64, c, c2, audio, logmel = (data[k] for k in ("x", "x64", "c", "c2", "audio", "logmel"))
    grad_w = data["grad_w"]
    w = tf.constant(data["w"])
    graph = {
        "fft": S.fft(c), "ifft": S.ifft(c), "fft2d": S.fft2d(c2), "ifft2d": S.ifft2d(c2),
        "fft3d": S.fft3d(c2), "ifft3d": S.ifft3d(c2),
        "rfft": S.rfft(x), "rfft_crop": S.rfft(x, [7]), "rfft_pad": S.rfft(x, [17]),
        "irfft": S.irfft(c), "irfft_n9": S.irfft(c, [9]), "irfft_n20": S.irfft(c, [20]),
        "rfft2d": S.rfft2d(x64, [4, 9]), "irfft2d": S.irfft2d(c2, [5, 7]),
        "rfft3d": S.rfft3d(x64), "irfft3d": S.irfft3d(c2, [2, 4, 10]),
        "frame": S.frame(x, 5, 3), "frame_pad": S.frame(x, 5, 4, pad_end=True, pad_value=2.0),
        "frame_axis0": S.frame(x64, 3, 1, axis=1), "frame_short": S.frame(x, 20, 3),
        "ola": S.overlap_and_add(S.frame(x, 5, 3), 3), "ola_3d": S.overlap_and_add(x64, 2),
        "hann1": S.hann_window(1), "hann5": S.hann_window(5), "hann6": S.hann_window(6),
        "hann5s": S.hann_window(5, periodic=False), "hann6s": S.hann_window(6, periodic=False),
        "hamming7": S.hamming_window(7), "hamming8s": S.hamming_window(8, periodic=False),
        "hann6_64": S.hann_window(6, dtype=tf.float64),
        "stft": S.stft(audio, 64, 16), "stft_pad": S.stft(audio, 50, 20, fft_length=64,
                                                       pad_end=True),
        "stft_hamming": S.stft(audio, 32, 32, window_fn=S.hamming_window),
        "inv_window": S.inverse_stft_window_fn(16)(64, tf.float32),
        "mel": S.linear_to_mel_weight_matrix(), "mel2": S.linear_to_mel_weight_matrix(
            40, 257, 16000, 20.0, 7600.0),
        "mfcc": S.mfccs_from_log_mel_spectrograms(logmel),
        "dct": S.dct(logmel), "dct_ortho": S.dct(logmel, norm="ortho"),
    }
    stfts = S.stft(audio, 64, 16)
    graph["istft"] = S.inverse_stft(stfts, 64, 16, window_fn=S.inverse_stft_window_fn(16))
    graph["istft_plain"] = S.inverse_stft(stfts, 64, 16)
    graph["istft_short_fft"] = S.inverse_stft(S.stft(audio, 64, 16, fft_length=48), 64, 16,
                                              fft_length=48)

    # gradients of a real loss through each FFT op (weights make every output count differently)
    xr = tf.constant(x64)
    cc = tf.constant(c2)


    def loss(z):
        zw = z * tf.cast(tf.slice(tf.pad(w, [[0, 0], [0, 10], [0, 10]]), [0, 0, 0], tf.shape(z)),
                         z.dtype) if z.dtype.is_complex else z * tf.slice(
            tf.pad(tf.constant(grad_w), [[0, 0], [0, 10], [0, 10]]), [0, 0, 0], tf.shape(z))
        return tf.reduce_sum(tf.real(zw) + 2.0 * tf.imag(zw)) if z.dtype.is_complex else \
            tf.reduce_sum(zw)


    for key, fn, src in (("fft", S.fft, cc), ("ifft", S.ifft, cc), ("fft2d", S.fft2d, cc),
                         ("ifft2d", S.ifft2d, cc),
                         ("rfft", lambda t: S.rfft(t, [6]), xr),
                         ("rfft_pad", lambda t: S.rfft(t, [9]), xr),
                         ("rfft2d", lambda t: S.rfft2d(t, [5, 6]), xr),
                         ("irfft", lambda t: S.irfft(t, [10]), cc),
                         ("irfft_odd", lambda t: S.irfft(t, [11]), cc),
                         ("irfft2d", lambda t: S.irfft2d(t, [4, 10]), cc)):
        graph[f"grad_{key}"] = tf.gradients(loss(fn(src)), src)[0]

    return graph
