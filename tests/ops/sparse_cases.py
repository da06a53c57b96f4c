"""Sparse-op cases shared by make_sparse_expected.py (run with TensorFlow) and
test_sparse_ops.py (run with tensorweave): each builds fetchables from the `tf` module."""

import numpy as np

IDX = [[0, 1], [1, 0], [1, 2], [2, 3]]
VALS = [1.0, -2.0, 3.0, 0.5]
SHAPE = [3, 4]
DENSE = np.arange(8, dtype=np.float32).reshape(4, 2) - 3.0


def _sp(tf, values=None):
    return tf.SparseTensor(IDX, tf.constant(VALS if values is None else values), SHAPE)


def _grads(tf, fn, dense=None):
    """fn(sparse, dense) -> output; returns (output, d values, [d dense])."""
    values = tf.constant(VALS)
    sp = tf.SparseTensor(IDX, values, SHAPE)
    d = tf.constant(DENSE if dense is None else dense)
    out = fn(sp, d)
    target = out.values if hasattr(out, "dense_shape") else out
    weights = tf.cast(tf.range(1, tf.size(target) + 1), tf.float32)
    loss = tf.reduce_sum(tf.reshape(target, [-1]) * weights)
    grads = [g for g in tf.gradients(loss, [values, d]) if g is not None]
    return [out] + grads


CASES = {
    "reorder": lambda tf: tf.sparse_reorder(tf.SparseTensor([[2, 0], [0, 1], [1, 1]],
                                                            [1.0, 2.0, 3.0], [3, 2])),
    "reorder_grad": lambda tf: _grads(tf, lambda sp, d: tf.sparse_reorder(
        tf.SparseTensor([[2, 0], [0, 1], [1, 1], [0, 0]], sp.values, [3, 4]))),
    "transpose": lambda tf: tf.sparse_transpose(_sp(tf)),
    "transpose_3d": lambda tf: tf.sparse_transpose(
        tf.SparseTensor([[0, 1, 2], [1, 0, 0]], [1.0, 2.0], [2, 3, 4]), [2, 0, 1]),
    "reduce_sum_all": lambda tf: tf.sparse_reduce_sum(_sp(tf)),
    "reduce_sum_0": lambda tf: tf.sparse_reduce_sum(_sp(tf), 0),
    "reduce_sum_1_keep": lambda tf: tf.sparse_reduce_sum(_sp(tf), 1, keepdims=True),
    "reduce_sum_grad": lambda tf: _grads(tf, lambda sp, d: tf.sparse_reduce_sum(sp, 1)),
    "dense_matmul": lambda tf: _grads(tf, lambda sp, d: tf.sparse_tensor_dense_matmul(sp, d)),
    "dense_matmul_adj_a": lambda tf: _grads(
        tf, lambda sp, d: tf.sparse_tensor_dense_matmul(sp, d, adjoint_a=True),
        np.arange(6, dtype=np.float32).reshape(3, 2)),
    "dense_matmul_adj_b": lambda tf: _grads(
        tf, lambda sp, d: tf.sparse_tensor_dense_matmul(sp, d, adjoint_b=True),
        np.arange(8, dtype=np.float32).reshape(2, 4)),
    "add_sparse": lambda tf: _grads(tf, lambda sp, d: tf.sparse_add(
        sp, tf.SparseTensor([[0, 1], [0, 2], [2, 3]], [1.0, 4.0, -0.5], SHAPE))),
    "add_thresh": lambda tf: tf.sparse_add(
        _sp(tf), tf.SparseTensor([[0, 1], [1, 2]], [-0.9, -2.5], SHAPE), 0.2),
    "add_dense": lambda tf: _grads(tf, lambda sp, d: tf.sparse_add(sp, d),
                                   np.ones((3, 4), np.float32)),
    "concat_0": lambda tf: tf.sparse_concat(0, [_sp(tf), _sp(tf)]),
    "concat_1": lambda tf: tf.sparse_concat(1, [_sp(tf), tf.SparseTensor(
        [[0, 0], [2, 1]], [7.0, 8.0], [3, 2])]),
    "concat_expand": lambda tf: tf.sparse_concat(0, [_sp(tf), tf.SparseTensor(
        [[0, 5]], [9.0], [1, 6])], expand_nonconcat_dim=True),
    "slice": lambda tf: _grads(tf, lambda sp, d: tf.sparse_slice(sp, [1, 0], [2, 3])),
    "slice_edge": lambda tf: tf.sparse_slice(_sp(tf), [2, 2], [5, 5]),
    "softmax": lambda tf: _grads(tf, lambda sp, d: tf.sparse_softmax(sp)),
    "to_dense": lambda tf: tf.sparse_tensor_to_dense(_sp(tf), default_value=-1.0),
    "retain": lambda tf: tf.sparse_retain(_sp(tf), [True, False, True, False]),
    "reshape": lambda tf: tf.sparse_reshape(_sp(tf), [2, -1]),
    "fill_empty_rows": lambda tf: tf.sparse_fill_empty_rows(
        tf.SparseTensor([[1, 0], [3, 2]], [1.0, 2.0], [5, 3]), 9.0),
    "segment_sum": lambda tf: tf.sparse_segment_sum(tf.constant(DENSE), [0, 2, 3, 3],
                                                    [0, 0, 1, 3]),
    "segment_mean_n": lambda tf: tf.sparse_segment_mean(
        tf.constant(DENSE), [0, 2, 3, 3], [0, 0, 1, 1], num_segments=4),
    "segment_sqrt_n": lambda tf: tf.sparse_segment_sqrt_n(tf.constant(DENSE), [1, 2, 0],
                                                          [0, 0, 2]),
}
