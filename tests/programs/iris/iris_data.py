"""Stand-in for tensorflow/models' samples/core/get_started/iris_data.py: the same functions
(load_data, train_input_fn, eval_input_fn, SPECIES), with the iris data from scikit-learn
(the same 150 flowers) split 120/30 instead of downloaded CSVs read by pandas. Written for
tensorweave's tests; the input_fns build the same tf.data pipelines the original describes.
"""

import numpy as np
import tensorflow as tf

CSV_COLUMN_NAMES = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth', 'Species']
SPECIES = ['Sentosa', 'Versicolor', 'Virginica']


def load_data(y_name='Species'):
    from sklearn.datasets import load_iris
    iris = load_iris()
    order = np.random.RandomState(0).permutation(len(iris.target))
    x, y = iris.data[order].astype(np.float32), iris.target[order].astype(np.int64)

    def frame(rows):
        return {name: x[rows, i] for i, name in enumerate(CSV_COLUMN_NAMES[:4])}
    return (frame(slice(0, 120)), y[:120]), (frame(slice(120, None)), y[120:])


def train_input_fn(features, labels, batch_size):
    data = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    return data.shuffle(1000).repeat().batch(batch_size).make_one_shot_iterator().get_next()


def eval_input_fn(features, labels, batch_size):
    inputs = dict(features) if labels is None else (dict(features), labels)
    data = tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)
    return data.make_one_shot_iterator().get_next()
