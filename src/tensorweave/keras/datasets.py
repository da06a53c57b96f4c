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


class _Imdb(_Dataset):
    """Keras's IMDB loader: reviews as lists of word indices (1 starts a review, 2 replaces
    words outside the top `num_words` or `skip_top`, real words from `index_from`)."""

    def load_data(self, path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113,
                  start_char=1, oov_char=2, index_from=3, **kwargs):
        with np.load(get_file(path, origin=self.origin), allow_pickle=True) as f:
            parts = [(f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])]
        rng = np.random.RandomState(seed)
        shuffled = []
        for x, y in parts:
            order = np.arange(len(x))
            rng.shuffle(order)
            shuffled.append((x[order], y[order]))
        out = []
        for x, y in shuffled:
            seqs = [[start_char] + [w + index_from for w in s] if start_char is not None
                    else [w + index_from for w in s] for s in x]
            if maxlen:
                kept = [i for i, s in enumerate(seqs) if len(s) < maxlen]
                seqs, y = [seqs[i] for i in kept], y[kept]
            limit = num_words or max(max(s) for s in seqs if s) + 1
            seqs = [[w if skip_top <= w < limit else oov_char for w in s] for s in seqs]
            arr = np.empty(len(seqs), dtype=object)
            arr[:] = seqs
            out.append((arr, y))
        return out[0], out[1]


imdb = _Imdb("imdb.npz", _BASE + "imdb.npz", None)
