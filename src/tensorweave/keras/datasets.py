"""`tf.keras.datasets`: loaders that read Keras's cached files (`~/.keras/datasets/`) and, as
nothing is downloaded here, fail with a clear message when the file is not cached."""

from __future__ import annotations

import numpy as np

from tensorweave.keras.utils import get_file


class _Dataset:
    def __init__(self, fname: str, origin: str, loader):
        self.fname, self.origin, self._loader = fname, origin, loader

    def load_data(self, path=None, **kwargs):
        return self._loader(get_file(path or self.fname, origin=self.origin))


def _npz_pairs(path):
    with np.load(path, allow_pickle=True) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


_BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
mnist = _Dataset("mnist.npz", _BASE + "mnist.npz", _npz_pairs)
fashion_mnist = _Dataset("fashion-mnist.npz", _BASE + "fashion-mnist", _npz_pairs)
boston_housing = _Dataset("boston_housing.npz", _BASE + "boston_housing.npz", _npz_pairs)
imdb = _Dataset("imdb.npz", _BASE + "imdb.npz", _npz_pairs)
