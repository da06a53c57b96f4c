"""CTC cases shared by make_ctc_expected.py (run with TensorFlow) and test_ctc.py (run with
tensorweave): each builds a list of fetchables (Tensors, SparseTensors) from the `tf` module.

Logits are fixed random normals (no ties between classes), labels include repeats (which
need a blank between them) and a label too long for its sequence."""

from __future__ import annotations

import numpy as np

T, B, C = 7, 4, 5
_RNG = np.random.default_rng(18)
LOGITS = _RNG.normal(scale=2.0, size=(T, B, C)).astype(np.float32)
SEQ = np.array([7, 5, 7, 3], np.int32)
# batch 0: [1, 1, 2]; batch 1: [3]; batch 2: [0, 2, 0, 2]; batch 3: [2]
IDX = [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0], [2, 1], [2, 2], [2, 3], [3, 0]]
VALS = [1, 1, 2, 3, 0, 2, 0, 2, 2]
WEIGHTS = np.array([1.0, -0.5, 2.0, 0.75], np.float32)


def _labels(tf, idx=IDX, vals=VALS, shape=(B, 4)):
    return tf.SparseTensor(np.array(idx, np.int64), tf.constant(vals, tf.int32),
                           np.array(shape, np.int64))


def _loss_and_grad(tf, dtype=np.float32, seq=SEQ, labels=None, time_major=True, **kw):
    logits = LOGITS.astype(dtype)
    x = tf.constant(logits if time_major else logits.transpose(1, 0, 2))
    loss = tf.nn.ctc_loss(_labels(tf) if labels is None else labels, x, tf.constant(seq),
                          time_major=time_major, **kw)
    weighted = tf.reduce_sum(loss * tf.constant(WEIGHTS.astype(dtype)))
    return [loss, tf.gradients(weighted, x)[0]]


def _long(tf, **kw):
    """Batch 1's label [3, 3, 1, 2, 0, 1] is longer than its 5 steps."""
    idx = IDX[:3] + [[1, i] for i in range(6)] + IDX[4:]
    vals = VALS[:3] + [3, 3, 1, 2, 0, 1] + VALS[4:]
    return _loss_and_grad(tf, labels=_labels(tf, idx, vals, (B, 6)), **kw)


def _no_path(tf):
    """[2, 2] in 2 steps: enough labels' time, but the repeat needs a blank: loss inf."""
    labels = _labels(tf, [[0, 0], [0, 1]], [2, 2], (1, 2))
    x = tf.constant(LOGITS[:2, :1])
    loss = tf.nn.ctc_loss(labels, x, tf.constant([2], tf.int32))
    return [loss, tf.gradients(tf.reduce_sum(loss), x)[0]]


def _v2_dense(tf, blank_index):
    labels = tf.constant([[1, 1, 2, 0], [3, 0, 0, 0], [0, 2, 0, 2], [2, 0, 0, 0]], tf.int32)
    if blank_index == 0:
        labels = labels + tf.cast(tf.sequence_mask([3, 1, 4, 1], 4), tf.int32)
    x = tf.constant(LOGITS)
    loss = tf.nn.ctc_loss_v2(labels, x, tf.constant([3, 1, 4, 1]), tf.constant(SEQ),
                             blank_index=blank_index)
    return [loss, tf.gradients(tf.reduce_sum(loss * WEIGHTS), x)[0]]


def _v2_sparse(tf):
    x = tf.constant(LOGITS)
    vals = [v if v < 2 else v + 1 for v in VALS]   # class 2 is the blank
    loss = tf.nn.ctc_loss_v2(_labels(tf, vals=vals), x, None, tf.constant(SEQ),
                             blank_index=2)
    return [loss, tf.gradients(tf.reduce_sum(loss * WEIGHTS), x)[0]]


def _greedy(tf, **kw):
    decoded, neg_sum = tf.nn.ctc_greedy_decoder(tf.constant(LOGITS), tf.constant(SEQ), **kw)
    return [decoded[0], neg_sum]


def _beam(tf, **kw):
    decoded, log_prob = tf.nn.ctc_beam_search_decoder(tf.constant(LOGITS), tf.constant(SEQ),
                                                      **kw)
    return list(decoded) + [log_prob]


CASES = {
    "loss": _loss_and_grad,
    "loss_f64": lambda tf: _loss_and_grad(tf, np.float64),
    "loss_batch_major": lambda tf: _loss_and_grad(tf, time_major=False),
    "loss_collapse": lambda tf: _loss_and_grad(tf, preprocess_collapse_repeated=True),
    "loss_no_merge": lambda tf: _loss_and_grad(tf, ctc_merge_repeated=False),
    "loss_collapse_no_merge": lambda tf: _loss_and_grad(
        tf, preprocess_collapse_repeated=True, ctc_merge_repeated=False),
    "loss_short_seq": lambda tf: _loss_and_grad(tf, seq=np.array([4, 1, 6, 1], np.int32)),
    "loss_zero_seq": lambda tf: _loss_and_grad(tf, seq=np.array([7, 0, 7, 3], np.int32),
                                               ignore_longer_outputs_than_inputs=True),
    "loss_ignore_longer": lambda tf: _long(tf, ignore_longer_outputs_than_inputs=True),
    "loss_no_path": _no_path,
    "loss_v2_dense_blank0": lambda tf: _v2_dense(tf, 0),
    "loss_v2_dense_blank_last": lambda tf: _v2_dense(tf, -1),
    "loss_v2_sparse_blank2": _v2_sparse,
    "greedy": _greedy,
    "greedy_no_merge": lambda tf: _greedy(tf, merge_repeated=False),
    "greedy_blank0": lambda tf: _greedy(tf, blank_index=0),
    "beam_1": lambda tf: _beam(tf, beam_width=1),
    "beam_3_top3": lambda tf: _beam(tf, beam_width=3, top_paths=3),
    "beam_10_top2": lambda tf: _beam(tf, beam_width=10, top_paths=2),
    "beam_10_top3_no_merge": lambda tf: _beam(tf, beam_width=10, top_paths=3,
                                              merge_repeated=False),
    "beam_100": lambda tf: _beam(tf),
    "unique_labels": lambda tf: list(tf.nn.ctc_unique_labels(
        tf.constant([[3, 4, 4, 3], [1, 1, 0, 0], [2, 5, 7, 5]], tf.int32))),
}


def flatten(values) -> list[np.ndarray]:
    """Fetched values as arrays (a SparseTensorValue as its three)."""
    out = []
    for v in values:
        if hasattr(v, "dense_shape"):
            out += [np.asarray(v.indices), np.asarray(v.values), np.asarray(v.dense_shape)]
        else:
            out.append(np.asarray(v))
    return out
