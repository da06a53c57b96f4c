"""Cases for the math/nn extras shared by make_extra_expected.py (TensorFlow) and
test_math_extra.py (tensorweave): each builds fetchables (values, then gradients) from `tf`."""

import numpy as np

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5
B = np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1.0
C = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7 - 1.5
_R = np.random.default_rng(3)
X5 = _R.normal(size=(2, 4, 6, 5, 3)).astype(np.float32)   # distinct values: unique maxima
W5 = _R.normal(size=(2, 3, 2, 3, 4)).astype(np.float32)
Y5 = _R.normal(size=(2, 2, 3, 5, 4)).astype(np.float32)


def _grad(tf, fn, *arrays):
    xs = [tf.constant(a) for a in arrays]
    out = fn(*xs)
    weights = tf.reshape(tf.cast(tf.range(1, tf.size(out) + 1), out.dtype), tf.shape(out))
    return [out] + tf.gradients(tf.reduce_sum(out * weights), xs)


CASES = {
    "einsum_matmul": lambda tf: _grad(tf, lambda a, b: tf.einsum("ij,jk->ik", a, b), A, B),
    "einsum_implicit": lambda tf: _grad(tf, lambda a, b: tf.einsum("ij,jk", a, b), A, B),
    "einsum_outer": lambda tf: _grad(tf, lambda a, b: tf.einsum("i,j->ij", a, b), A[0], B[0]),
    "einsum_trace_sum": lambda tf: _grad(tf, lambda a: tf.einsum("ij->j", a), A),
    "einsum_batch": lambda tf: _grad(tf, lambda c, b: tf.einsum("bij,jk->bik", c, b),
                                     C, B.T.copy()),
    "einsum_sum_only_one": lambda tf: _grad(tf, lambda a, b: tf.einsum("ij,k->ik", a, b),
                                            A, B[0]),
    "einsum_ellipsis": lambda tf: _grad(tf, lambda c: tf.einsum("...j->...", c), C),
    "roll": lambda tf: _grad(tf, lambda c: tf.roll(c, [1, -2], [0, 2]), C),
    "norm_all": lambda tf: _grad(tf, lambda c: tf.norm(c), C),
    "norm_axis": lambda tf: _grad(tf, lambda c: tf.norm(c, axis=1), C),
    "norm_1": lambda tf: _grad(tf, lambda c: tf.norm(c, ord=1, axis=-1, keepdims=True), C),
    "norm_inf": lambda tf: tf.norm(tf.constant(C), ord=np.inf, axis=2),
    "norm_3": lambda tf: _grad(tf, lambda c: tf.norm(c, ord=3, axis=0), C),
    "norm_matrix_1": lambda tf: tf.norm(tf.constant(C), ord=1, axis=[1, 2]),
    "norm_matrix_inf": lambda tf: tf.norm(tf.constant(C), ord=np.inf, axis=[1, 2]),
    "norm_fro": lambda tf: tf.norm(tf.constant(C), ord="fro", axis=[1, 2]),
    "eye": lambda tf: tf.eye(3),
    "eye_rect_batch": lambda tf: tf.eye(2, 4, batch_shape=[3], dtype=tf.int32),
    "sort": lambda tf: tf.sort(tf.constant([[3.0, -1.0, 2.0], [0.5, 0.25, 9.0]])),
    "sort_desc_axis0": lambda tf: tf.sort(tf.constant([[3, -1, 2], [0, 4, 1]]), axis=0,
                                          direction="DESCENDING"),
    "argsort": lambda tf: tf.argsort(tf.constant([[3.0, -1.0, 2.0], [0.5, 0.25, 9.0]])),
    "argsort_desc": lambda tf: tf.argsort(tf.constant([4, 1, 3, 2]), direction="DESCENDING"),
    "batch_gather": lambda tf: tf.batch_gather(tf.constant(C), tf.constant([[2, 0], [1, 1]])),
    "bitwise_and": lambda tf: tf.bitwise.bitwise_and(tf.constant([12, 7, -3]), 10),
    "bitwise_or": lambda tf: tf.bitwise.bitwise_or(tf.constant([12, 7, -3], tf.int64), 10),
    "bitwise_xor": lambda tf: tf.bitwise.bitwise_xor(tf.constant([12, 7], tf.uint8),
                                                     tf.constant([10, 255], tf.uint8)),
    "invert": lambda tf: tf.bitwise.invert(tf.constant([0, 5, -1], tf.int32)),
    "left_shift": lambda tf: tf.bitwise.left_shift(tf.constant([1, 3, -2]), [2, 4, 1]),
    "right_shift": lambda tf: tf.bitwise.right_shift(tf.constant([16, -16, 7]), [2, 2, 1]),
    "edit_distance": lambda tf: tf.edit_distance(
        tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], ["a", "b", "c", "x"], [3, 2]),
        tf.SparseTensor([[0, 0], [1, 0], [1, 1], [3, 0]], ["a", "c", "d", "y"], [4, 2])),
    "edit_distance_raw": lambda tf: tf.edit_distance(
        tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0]], [1, 2, 3], [1, 2, 2]),
        tf.SparseTensor([[0, 0, 0], [0, 1, 0], [0, 1, 1]], [1, 3, 4], [1, 2, 2]),
        normalize=False),
    "conv1d": lambda tf: _grad(tf, lambda x, w: tf.nn.conv1d(x, w, 1, "SAME"),
                               np.arange(30, dtype=np.float32).reshape(1, 10, 3) / 10,
                               np.arange(24, dtype=np.float32).reshape(4, 3, 2) / 20 - 0.5),
    "conv1d_stride_valid": lambda tf: tf.nn.conv1d(
        tf.constant(np.arange(30, dtype=np.float32).reshape(1, 10, 3)),
        tf.constant(np.ones((3, 3, 2), np.float32)), 2, "VALID"),
    "atrous_conv2d": lambda tf: tf.nn.atrous_conv2d(
        tf.constant(np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2)),
        tf.constant(np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3) / 10), 2, "SAME"),
    "pool_max": lambda tf: tf.nn.pool(tf.constant(C.reshape(1, 2, 3, 4)), [2, 2], "MAX",
                                      "SAME"),
    "pool_avg": lambda tf: tf.nn.pool(tf.constant(C.reshape(1, 2, 3, 4)), [1, 2], "AVG",
                                      "VALID", strides=[1, 1]),
    "swish": lambda tf: _grad(tf, lambda c: tf.nn.swish(c), C),
    "conv3d_same": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME"), X5, W5),
    # NOTE: TF's CPU Conv3D has no dilations (its GPU kernel has; ours too, untested vs TF)
    "conv3d_valid_strided": lambda tf: _grad(
        tf, lambda x, w: tf.nn.conv3d(x, w, [1, 2, 1, 2, 1], "VALID"), X5, W5[:, :2]),
    "conv3d_transpose": lambda tf: _grad(
        tf, lambda y, w: tf.nn.conv3d_transpose(y, w, [2, 4, 6, 5, 3], [1, 2, 2, 1, 1],
                                                "SAME"), Y5, W5),
    "max_pool3d": lambda tf: _grad(
        tf, lambda x: tf.nn.max_pool3d(x, [1, 2, 2, 3, 1], [1, 2, 2, 2, 1], "SAME"), X5),
    "avg_pool3d": lambda tf: _grad(
        tf, lambda x: tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 2, 2, 1], "SAME"), X5),
    "avg_pool3d_valid": lambda tf: _grad(
        tf, lambda x: tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"), X5),
}
