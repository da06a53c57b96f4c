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
           "keras.utils", "keras.optimizers", "keras.losses", "keras.callbacks"]


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
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in MODULES:
        module = tensorweave.keras
        for part in name.split(".")[1:]:
            module = getattr(module, part)
        monkeypatch.setitem(sys.modules, name, module)
    tensorweave.keras.backend.clear_session()
    yield
    tensorweave.keras.backend.clear_session()


@pytest.mark.slow
def test_keras_mnist_cnn_runs_unchanged(keras_as_keras, capsys):
    runpy.run_path(str(PROGRAMS / "keras_mnist_cnn.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "300 train samples" in out and "Epoch 12/12" in out
    loss = float(out.split("Test loss:")[1].split()[0])
    accuracy = float(out.split("Test accuracy:")[1].split()[0])
    assert np.isfinite(loss) and 0.0 <= accuracy <= 1.0
