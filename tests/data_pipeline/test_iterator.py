"""Stage 4: Iterator.from_structure with nested structures, make_initializer checks, and the
module-level iterator functions."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import iterator as iterator_lib
from tensorweave.data.iterator import Iterator
from tests.data_pipeline.helpers import Dataset, drain


def test_from_structure_nested_switches_between_train_and_test():
    it = Iterator.from_structure((tf.float32, {"label": tf.int64}), ([2], {"label": []}))
    assert it.output_types == (tf.float32, {"label": tf.int64})
    x, d = it.get_next()
    assert x.shape.as_list() == [2] and d["label"].dtype == tf.int64
    train = Dataset.from_tensor_slices((np.ones((3, 2), np.float32),
                                        {"label": np.arange(3)}))
    test = Dataset.from_tensor_slices((np.zeros((1, 2), np.float32),
                                       {"label": np.array([9])}))
    init_train, init_test = it.make_initializer(train), it.make_initializer(test)
    with tf.Session() as s:
        s.run(init_train)
        out = drain(s, (x, d))
        assert [int(o[1]["label"]) for o in out] == [0, 1, 2]
        s.run(init_test)
        xv, dv = s.run((x, d))
        np.testing.assert_array_equal(xv, [0, 0])
        assert int(dv["label"]) == 9
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(x)


def test_make_initializer_rejects_incompatible_shapes():
    it = Iterator.from_structure(tf.float32, [3])
    with pytest.raises(TypeError, match="shapes"):
        it.make_initializer(Dataset.from_tensor_slices(np.zeros((2, 4), np.float32)))
    with pytest.raises(ValueError, match="initializer"):
        _ = it.initializer


def test_from_structure_without_shapes_is_unknown_and_uninitialized_fails():
    it = Iterator.from_structure(tf.int64)
    nx = it.get_next()
    assert nx.shape.ndims is None
    with tf.Session() as s, pytest.raises(tf.errors.FailedPreconditionError):
        s.run(nx)


def test_module_functions_as_compat_v1_data():
    ds = Dataset.range(3)
    one = iterator_lib.make_one_shot_iterator(ds).get_next()
    init = iterator_lib.make_initializable_iterator(ds)
    nxt = init.get_next()
    with tf.Session() as s:
        assert [int(v) for v in drain(s, one)] == [0, 1, 2]
        s.run(init.initializer)
        assert [int(v) for v in drain(s, nxt)] == [0, 1, 2]
