"""MaxPoolGradGrad / MaxPoolGradGradV2: TF's tie rule, shape errors, second-order use."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.apply import apply_op

_X = np.array([[1, 3, 3, 0], [3, 2, 1, 3], [0, 0, 5, 5], [5, 5, 1, 1]],
              np.float32).reshape(1, 4, 4, 1)
_G = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) + 1


@pytest.mark.parametrize("op_type", ["MaxPoolGradGrad", "MaxPoolGradGradV2"])
@pytest.mark.parametrize("padding,k,s,want", [
    # written by TF 2.21 (gen_nn_ops.max_pool_grad_grad[_v2]) for these inputs
    ("VALID", 2, 2, [[2, 3], [13, 11]]),
    ("SAME", 3, 2, [[11, 11], [11, 11]]),
    ("VALID", 3, 1, [[11, 11], [11, 11]]),
])
def test_matches_tf_with_ties(op_type, padding, k, s, want):
    with tf.Graph().as_default():
        ks, ss = [1, k, k, 1], [1, s, s, 1]
        y = tf.nn.max_pool(_X, ks, ss, padding)
        if op_type == "MaxPoolGradGrad":
            out = apply_op(op_type, _X, y, _G, ksize=ks, strides=ss, padding=padding)
        else:
            out = apply_op(op_type, _X, y, _G, ks, ss, padding=padding)
        assert out.shape.as_list() == [1, 2, 2, 1]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out)[0, :, :, 0], want)


def test_shape_errors_at_construction():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 1])
        with pytest.raises(ValueError, match="Dimension 1 in both shapes.*MaxPoolGradGrad"):
            apply_op("MaxPoolGradGrad", x, tf.zeros([1, 3, 3, 1]), x, ksize=[1, 2, 2, 1],
                     strides=[1, 2, 2, 1], padding="VALID")
        with pytest.raises(ValueError, match="batch dimension"):
            apply_op("MaxPoolGradGrad", x, tf.zeros([1, 2, 2, 1]), x, ksize=[2, 2, 2, 1],
                     strides=[1, 2, 2, 1], padding="VALID")
        with pytest.raises(ValueError, match="must be equal|Dimension"):
            apply_op("MaxPoolGradGrad", x, tf.zeros([1, 2, 2, 1]), tf.zeros([1, 4, 5, 1]),
                     ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")


def test_second_derivative_through_max_pool_runs():
    """d/dx of a gradient of max_pool builds MaxPoolGradGrad (TF's nn_grad)."""
    with tf.Graph().as_default():
        x = tf.constant(np.random.default_rng(0).permutation(32).reshape(1, 4, 8, 1)
                        .astype(np.float32))
        w = tf.constant(np.linspace(-1, 1, 8).reshape(1, 2, 4, 1).astype(np.float32))
        y = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        (gx,) = tf.gradients(tf.reduce_sum(y * w), [x])
        (gw,) = tf.gradients(tf.reduce_sum(gx * x), [w])
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "MaxPoolGradGrad" in types
        with tf.Session() as sess:
            ygot, gwgot = sess.run([y, gw])
    np.testing.assert_allclose(gwgot, ygot)
