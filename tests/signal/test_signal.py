"""tf.signal against TensorFlow 2.21's numbers (tests/signal/make_signal_expected.py →
tests/data/signal_expected.npz): every FFT op, their gradients (TF's convention for complex
gradients), frames, overlap-add, windows, STFT and its inverse, mel matrices, DCT and MFCCs;
plus static shapes, dtypes, op names and build-time errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.client.gradient_checker import compute_gradient
from tests.signal.signal_graph import build

DATA = dict(np.load(Path(__file__).resolve().parents[1] / "data" / "signal_expected.npz"))
INPUTS = ("x", "x64", "c", "c2", "audio", "logmel", "w", "grad_w")
_RESULTS = {}


def _results():
    if not _RESULTS:
        with tf.Graph().as_default():
            graph = build(tf, DATA)
            _RESULTS["static"] = {k: t.shape.as_list() if t.shape.ndims is not None else None
                                  for k, t in graph.items()}
            with tf.Session() as sess:
                _RESULTS.update(sess.run(graph))
    return _RESULTS


KEYS = sorted(k for k in DATA if k not in INPUTS)


@pytest.mark.parametrize("key", KEYS)
def test_matches_tensorflow(key):
    got, want = _results()[key], DATA[key]
    assert got.dtype == want.dtype, key
    assert got.shape == want.shape, key
    tol = 1e-10 if want.dtype in (np.float64, np.complex128) else 2e-5
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=key)


@pytest.mark.parametrize("key", [k for k in KEYS if not k.startswith("grad_")])
def test_static_shapes_known(key):
    static = _results()["static"][key]
    assert static == list(DATA[key].shape), key


def test_op_names_and_attrs():
    with tf.Graph().as_default() as g:
        tf.signal.rfft(tf.zeros([4, 8], tf.float64))
        tf.spectral.irfft2d(tf.zeros([2, 4, 5], tf.complex64))
        tf.fft(tf.zeros([3], tf.complex128))
        ops = {op.type: op for op in g.get_operations()}
    assert ops["RFFT"].get_attr("Treal") == tf.float64
    assert ops["RFFT"].get_attr("Tcomplex") == tf.complex128
    assert ops["IRFFT2D"].get_attr("Tcomplex") == tf.complex64
    assert ops["FFT"].get_attr("Tcomplex") == tf.complex128


def test_build_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="FFT2D"):
            tf.signal.fft2d(tf.zeros([3], tf.complex64))
        with pytest.raises(TypeError, match="FFT"):
            tf.signal.fft(tf.zeros([3], tf.float32))
        with pytest.raises(ValueError, match="RFFT"):
            tf.signal.rfft(tf.zeros([3, 4]), [4, 4])


def test_unknown_shapes_run():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, None)
        q = tf.placeholder(tf.float32, [None, None])
        spec = tf.signal.rfft(p)
        ola = tf.signal.overlap_and_add(q, 2)
        with tf.Session() as sess:
            got, o = sess.run([spec, ola], {p: DATA["x"], q: DATA["x"]})
    np.testing.assert_allclose(got, DATA["rfft"], rtol=2e-5, atol=2e-5)
    want = np.zeros(16, np.float32)
    for i, row in enumerate(DATA["x"]):
        want[2 * i:2 * i + 12] += row
    np.testing.assert_allclose(o, want, rtol=1e-6, atol=1e-6)


def test_frame_and_stft_on_unknown_shapes():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, None])
        framed = tf.signal.frame(p, 5, 4, pad_end=True, pad_value=2.0)
        spec = tf.signal.stft(p, 64, 16)
        assert framed.shape.as_list() == [None, None, 5]
        with tf.Session() as sess:
            f, s = sess.run([framed, spec], {p: DATA["x"]})
            s2 = sess.run(spec, {p: DATA["audio"]})
    np.testing.assert_allclose(f, DATA["frame_pad"])
    assert s.shape == (3, 0, 33)
    np.testing.assert_allclose(s2, DATA["stft"], rtol=2e-5, atol=2e-4)


_SIG = np.random.default_rng(3).uniform(-1, 1, (2, 40))


@pytest.mark.parametrize("name,fn,out_shape", [
    ("frame", lambda x: tf.signal.frame(x, 8, 5), [2, 7, 8]),
    ("stft_abs", lambda x: tf.abs(tf.signal.stft(x, 16, 8, fft_length=16)), [2, 4, 9]),
    ("stft_istft", lambda x: tf.signal.inverse_stft(tf.signal.stft(x, 16, 8), 16, 8),
     [2, 40]),
    ("overlap_and_add", lambda x: tf.signal.overlap_and_add(tf.reshape(x, [2, 8, 5]), 3),
     [2, 26]),
    ("mfcc", lambda x: tf.signal.mfccs_from_log_mel_spectrograms(tf.reshape(x, [4, 20])),
     [4, 20]),
])
def test_gradients_match_finite_differences(name, fn, out_shape):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 40])
        y = fn(x)
        assert y.shape.as_list() == out_shape
        jt, jn = compute_gradient(x, [2, 40], y, out_shape, x_init_value=_SIG)
    np.testing.assert_allclose(jt, jn, rtol=1e-4, atol=1e-6, err_msg=name)


def test_tensorflows_graphdef_imports_and_runs():
    data = Path(__file__).resolve().parents[1] / "data"
    want = np.load(data / "signal_graph_expected.npz")
    graph_def = tf.GraphDef()
    graph_def.ParseFromString((data / "signal_graph.pb").read_bytes())
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            got = sess.run({k: f"{k}:0" for k in ("mfccs", "istft", "grad")},
                           {"audio:0": want["audio"]})
    for k in ("mfccs", "istft", "grad"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-4, err_msg=k)
