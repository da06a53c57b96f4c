"""DType enum values and numpy mapping; TensorShape algebra."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.shapes import broadcast_shapes


@pytest.mark.parametrize("name,enum,np_type", [
    ("float32", 1, np.float32), ("float64", 2, np.float64), ("int32", 3, np.int32),
    ("uint8", 4, np.uint8), ("int16", 5, np.int16), ("int8", 6, np.int8), ("int64", 9, np.int64),
    ("bool", 10, np.bool_), ("uint16", 17, np.uint16), ("float16", 19, np.float16),
    ("complex64", 8, np.complex64), ("complex128", 18, np.complex128), ("uint32", 22, np.uint32),
])
def test_dtype_enums_match_tensorflow(name, enum, np_type):
    dt = tf.as_dtype(name)
    assert dt.as_datatype_enum == enum
    assert dt.as_numpy_dtype == np_type
    assert tf.as_dtype(np_type) == dt
    assert tf.as_dtype(enum) == dt


def test_ref_dtypes_and_properties():
    r = tf.float32._as_ref
    assert r.as_datatype_enum == 101 and r.base_dtype == tf.float32 and r.is_ref_dtype
    assert tf.string.as_datatype_enum == 7
    assert tf.float32.is_floating and tf.int8.is_integer and not tf.bool.is_numeric
    assert tf.int32.max == 2**31 - 1
    with pytest.raises(TypeError):
        tf.as_dtype("nope")


def test_shape_merge_and_compatibility():
    s = tf.TensorShape([None, 3])
    assert s.merge_with([2, None]).as_list() == [2, 3]
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert tf.TensorShape(None).ndims is None
    assert tf.TensorShape(None).merge_with([1]).as_list() == [1]
    assert s[1].value == 3 and s[0].value is None
    with pytest.raises(ValueError):
        s.merge_with([1, 4])
    assert s.num_elements() is None and tf.TensorShape([2, 3]).num_elements() == 6


def test_broadcast_shapes():
    a, b = tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1])
    assert broadcast_shapes(a, b).as_list() == [None, 4, 3]
    with pytest.raises(ValueError):
        broadcast_shapes(tf.TensorShape([2]), tf.TensorShape([3]))
