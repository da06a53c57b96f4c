"""A small local stand-in for `tensorflow.examples.tutorials.mnist.input_data`: sklearn's 8x8
digits (1797 images) scaled up 3x and padded to MNIST's 28x28, in [0, 1], split into train
(1297) / validation (250) / test (250), with TF's `DataSet.next_batch` (reshuffled each epoch).

Programs see it as `tensorflow.examples.tutorials.mnist.input_data` (the tests inject it)."""

from __future__ import annotations

import collections

import numpy as np

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _images_and_labels():
    from sklearn.datasets import load_digits

    digits = load_digits()
    big = np.kron(digits.images, np.ones((3, 3))) / 16.0          # 24x24
    images = np.pad(big, ((0, 0), (2, 2), (2, 2))).reshape(-1, 784).astype(np.float32)
    return images, digits.target.astype(np.int64)


class DataSet:
    """images [N, 784] float32, labels [N] or one-hot [N, 10]; `next_batch` as TF's."""

    def __init__(self, images, labels, seed):
        self._images, self._labels = images, labels
        self._num_examples = len(images)
        self._index_in_epoch = 0
        self._epochs_completed = 0
        self._rng = np.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def _shuffle(self):
        order = self._rng.permutation(self._num_examples)
        self._images, self._labels = self._images[order], self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        del fake_data
        if self._epochs_completed == 0 and self._index_in_epoch == 0 and shuffle:
            self._shuffle()
        start = self._index_in_epoch
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest_x, rest_y = self._images[start:], self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - len(rest_x)
            return (np.concatenate([rest_x, self._images[:self._index_in_epoch]]),
                    np.concatenate([rest_y, self._labels[:self._index_in_epoch]]))
        self._index_in_epoch += batch_size
        return (self._images[start:self._index_in_epoch],
                self._labels[start:self._index_in_epoch])


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=None, reshape=True,
                   validation_size=250, seed=None):
    del train_dir, fake_data, dtype, reshape
    images, labels = _images_and_labels()
    if one_hot:
        labels = np.eye(10, dtype=np.float32)[labels]
    n_test = 250
    train = slice(0, len(images) - n_test - validation_size)
    val = slice(train.stop, len(images) - n_test)
    test = slice(val.stop, len(images))
    seed = 0 if seed is None else seed
    return Datasets(DataSet(images[train], labels[train], seed),
                    DataSet(images[val], labels[val], seed + 1),
                    DataSet(images[test], labels[test], seed + 2))


def install(tensorflow_module) -> None:
    """Makes `from tensorflow.examples.tutorials.mnist import input_data` give this module."""
    import sys
    import types

    names = ["tensorflow.examples", "tensorflow.examples.tutorials",
             "tensorflow.examples.tutorials.mnist"]
    parent = tensorflow_module
    for name in names:
        module = sys.modules.get(name) or types.ModuleType(name)
        sys.modules[name] = module
        setattr(parent, name.rsplit(".", 1)[1], module)
        parent = module
    sys.modules["tensorflow.examples.tutorials.mnist.input_data"] = sys.modules[__name__]
    parent.input_data = sys.modules[__name__]
