"""Public Keras programs run unchanged (tests/programs/, sources named in their headers), with
tensorweave.keras as `keras` and small stand-in datasets in a temporary Keras cache."""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
MODULES = ["keras", "keras.datasets", "keras.models", "keras.layers", "keras.backend",
           "keras.utils", "keras.optimizers", "keras.losses", "keras.callbacks",
           "keras.preprocessing", "keras.preprocessing.sequence"]


@pytest.fixture
def keras_as_keras(monkeypatch, tmp_path):
    """`import keras` gives tensorweave.keras; ~/.keras/datasets/mnist.npz is a stand-in of
    scikit-learn's digits scaled to 28x28 (300 training and 100 test images)."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    images = np.kron((x.reshape(-1, 8, 8) * 15).astype(np.uint8), np.ones((3, 3), np.uint8))
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    cache = tmp_path / ".keras" / "datasets"
    cache.mkdir(parents=True)
    np.savez(cache / "mnist.npz", x_train=images[:300], y_train=y[:300],
             x_test=images[300:400], y_test=y[300:400])
    np.savez(cache / "imdb.npz", **_reviews())
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in MODULES:
        module = tensorweave.keras
        for part in name.split(".")[1:]:
            module = getattr(module, part)
        monkeypatch.setitem(sys.modules, name, module)
    tensorweave.keras.backend.clear_session()
    yield
    tensorweave.keras.backend.clear_session()


def _reviews(n=160, vocab=60):
    """Word-index "reviews" of 10-40 words: positive ones draw more from words 0-9."""
    rng = np.random.default_rng(5)
    out = {}
    for part in ("train", "test"):
        labels = rng.integers(0, 2, n)
        seqs = np.empty(n, dtype=object)
        for i, label in enumerate(labels):
            words = rng.integers(10, vocab, rng.integers(10, 40)).tolist()
            if label:
                words[::3] = rng.integers(0, 10, len(words[::3])).tolist()
            seqs[i] = words
        out[f"x_{part}"], out[f"y_{part}"] = seqs, labels
    return out


@pytest.mark.slow
def test_keras_imdb_lstm_runs_unchanged_and_learns(keras_as_keras, capsys):
    runpy.run_path(str(PROGRAMS / "keras_imdb_lstm.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "160 train sequences" in out and "x_train shape: (160, 80)" in out
    assert "Epoch 15/15" in out
    assert float(out.split("Test accuracy:")[1].split()[0]) > 0.75


@pytest.mark.slow
def test_keras_mnist_cnn_runs_unchanged(keras_as_keras, capsys):
    runpy.run_path(str(PROGRAMS / "keras_mnist_cnn.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "300 train samples" in out and "Epoch 12/12" in out
    loss = float(out.split("Test loss:")[1].split()[0])
    accuracy = float(out.split("Test accuracy:")[1].split()[0])
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0


@pytest.mark.slow
def test_the_keras_digits_example_shows_keras_progress_and_learns():
    import subprocess

    example = PROGRAMS.parent.parent / "examples" / "keras_digits.py"
    out = subprocess.run([sys.executable, str(example), "--epochs", "6"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Epoch 6/6" in out.stdout and "[==============================]" in out.stdout
    assert "val_acc" in out.stdout and "Total params" in out.stdout
    # NOTE: a guess scores 0.1; 6 epochs gave 0.87-0.98 here (batch norm's moving statistics
    # are noisy this early; TF's run of the same file: 0.90-0.94 after 10 epochs)
    assert float(out.stdout.split("test accuracy:")[1]) > 0.8


_GUIDE = """
import sys, runpy, tensorweave
sys.modules["tensorflow"] = tensorweave
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@pytest.mark.slow
def test_the_tf1_keras_guide_runs_unchanged(tmp_path):
    """Every block of TF 1.x's Keras guide: Sequential, compile with tf.train optimizers,
    numpy and tf.data input, evaluate/predict, functional, subclassed, a custom layer,
    callbacks with TensorBoard, weights in both formats, a whole model in HDF5."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _GUIDE, str(PROGRAMS / "tf_guide_keras.py")],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("Epoch 1/10") == 4 and out.stdout.count("Epoch 1/5") == 5
    assert (tmp_path / "my_model.h5").exists() and (tmp_path / "my_model.index").exists()
    assert any((tmp_path / "logs").iterdir())        # TensorBoard's event file
