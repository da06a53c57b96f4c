"""tf.contrib.seq2seq against TF 1.15's semantics: sequence_loss's reductions (numpy
reference), tile_batch, gather_tree (TF's own test case), and a toy reverse-copy task that
trains a Bahdanau-attention decoder with TrainingHelper and decodes it greedily and with
BeamSearchDecoder (TF's output shapes, TF's variable names, the copy learned)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

seq2seq = tf.contrib.seq2seq


def _xent(logits, targets):
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, targets[..., None], -1)[..., 0]


@pytest.mark.parametrize("kwargs, reduce", [
    ({}, lambda c, w: (c * w).sum() / w.sum()),
    ({"average_across_batch": False}, lambda c, w: (c * w).sum(1) / w.sum(1)),
    ({"average_across_timesteps": False}, lambda c, w: (c * w).sum(0) / w.sum(0)),
    ({"average_across_timesteps": False, "average_across_batch": False},
     lambda c, w: c * w),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True, "sum_over_batch": True},
     lambda c, w: (c * w).sum() / np.count_nonzero(w)),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True},
     lambda c, w: (c * w).sum(1) / np.count_nonzero(w, 1)),
])
def test_sequence_loss_reductions(kwargs, reduce):
    rng = np.random.RandomState(1)
    logits = rng.normal(size=(3, 4, 5)).astype(np.float32)
    targets = rng.randint(0, 5, size=(3, 4)).astype(np.int32)
    weights = np.array([[1, 1, 0.5, 0], [1, 0, 0, 0], [1, 1, 1, 1]], np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(seq2seq.sequence_loss(logits, targets, weights, **kwargs))
    np.testing.assert_allclose(got, reduce(_xent(logits, targets), weights), rtol=1e-5)


def test_sequence_loss_errors():
    with tf.Graph().as_default():
        logits, targets = tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32)
        weights = tf.ones([2, 3])
        with pytest.raises(ValueError, match="Logits must be a"):
            seq2seq.sequence_loss(tf.zeros([2, 3]), targets, weights)
        with pytest.raises(ValueError, match="Targets must be a"):
            seq2seq.sequence_loss(logits, tf.zeros([2], tf.int32), weights)
        with pytest.raises(ValueError, match="cannot be set to True at same time"):
            seq2seq.sequence_loss(logits, targets, weights, sum_over_timesteps=True)


def test_tile_batch_and_gather_tree():
    # TF 1.15 beam_search_ops_test.testGatherTreeOne: [batch=1, time=5, beam=3]
    step_ids = np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9], [-1, -1, -1], [-1, -1, -1]]])
    parent_ids = np.array([[[0, 0, 0], [0, 1, 1], [2, 1, 2], [-1, -1, -1], [-1, -1, -1]]])
    expected = [[[2, 2, 2], [6, 5, 6], [7, 8, 9], [10, 10, 10], [10, 10, 10]]]
    with tf.Graph().as_default(), tf.Session() as sess:
        beams = seq2seq.gather_tree(step_ids.transpose(1, 0, 2), parent_ids.transpose(1, 0, 2),
                                    max_sequence_lengths=[3], end_token=10)
        state = tf.nn.rnn_cell.LSTMStateTuple(tf.constant([[1.0], [2.0]]),
                                              tf.constant([[3.0], [4.0]]))
        tiled = seq2seq.tile_batch(state, 2)
        assert tiled.c.shape.as_list() == [4, 1]
        got_beams, got_tiled = sess.run([beams, tiled])
    np.testing.assert_array_equal(got_beams.transpose(1, 0, 2), expected)
    np.testing.assert_array_equal(got_tiled.c[:, 0], [1, 1, 2, 2])
    with pytest.raises(ValueError, match="statically known rank"):
        seq2seq.tile_batch(tf.constant(1.0), 2)


V, T, H, W, GO, EOS = 8, 4, 24, 3, 1, 2


def _batch(rng, n=32):
    src = rng.randint(3, V, size=(n, T))
    rev = src[:, ::-1]
    return (src, np.concatenate([np.full((n, 1), GO), rev], 1),
            np.concatenate([rev, np.full((n, 1), EOS)], 1))


def _build(mode):
    """The same model for training, greedy and beam decoding (variables restored by name)."""
    src = tf.placeholder(tf.int32, [None, T], name="src")
    emb = tf.get_variable("emb", [V, 12])
    with tf.variable_scope("encoder"):
        memory, enc_state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(H),
                                              tf.nn.embedding_lookup(emb, src),
                                              dtype=tf.float32)
    batch = tf.shape(src)[0]
    lengths = tf.fill([batch], T)
    if mode == "beam":
        memory, enc_state, lengths = (seq2seq.tile_batch(x, W)
                                      for x in (memory, enc_state, lengths))
    mechanism = seq2seq.BahdanauAttention(H, memory, memory_sequence_length=lengths)
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(H), mechanism,
                                    attention_layer_size=H)
    init = cell.zero_state(batch * W if mode == "beam" else batch,
                           tf.float32).clone(cell_state=enc_state)
    proj = tf.layers.Dense(V, name="output_projection")
    if mode == "train":
        din = tf.placeholder(tf.int32, [None, T + 1], name="din")
        dout = tf.placeholder(tf.int32, [None, T + 1], name="dout")
        helper = seq2seq.TrainingHelper(tf.nn.embedding_lookup(emb, din),
                                        tf.fill([batch], T + 1))
        out, _, _ = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, init, proj))
        loss = seq2seq.sequence_loss(out.rnn_output, dout, tf.ones([batch, T + 1]))
        return src, din, dout, out, loss, tf.train.AdamOptimizer(0.02).minimize(loss)
    if mode == "greedy":
        helper = seq2seq.GreedyEmbeddingHelper(emb, tf.fill([batch], GO), EOS)
        out, _, lens = seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, init, proj),
                                              maximum_iterations=2 * T)
        return src, out, lens
    decoder = seq2seq.BeamSearchDecoder(cell, emb, tf.fill([batch], GO), EOS, init, W,
                                        output_layer=proj, length_penalty_weight=0.5)
    out, _, lens = seq2seq.dynamic_decode(decoder, maximum_iterations=2 * T)
    return src, out, lens


@pytest.mark.slow
def test_attention_seq2seq_learns_reverse_copy_greedy_and_beam(tmp_path):
    rng = np.random.RandomState(0)
    ckpt = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        src, din, dout, out, loss, train = _build("train")
        names = [v.op.name for v in tf.trainable_variables()]
        assert names == [
            "emb", "encoder/rnn/lstm_cell/kernel", "encoder/rnn/lstm_cell/bias",
            "memory_layer/kernel", "decoder/attention_wrapper/lstm_cell/kernel",
            "decoder/attention_wrapper/lstm_cell/bias",
            "decoder/attention_wrapper/bahdanau_attention/query_layer/kernel",
            "decoder/attention_wrapper/bahdanau_attention/attention_v",
            "decoder/attention_wrapper/attention_layer/kernel",
            "decoder/output_projection/kernel", "decoder/output_projection/bias"]
        assert out.rnn_output.shape.as_list() == [None, None, V]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(150):
                a, b, c = _batch(rng)
                losses.append(sess.run([loss, train], {src: a, din: b, dout: c})[0])
            tf.train.Saver().save(sess, ckpt)
    assert losses[0] > 1.5 and np.mean(losses[-10:]) < 0.1, losses[::15]
    a, _, c = _batch(rng, 16)
    for mode in ("greedy", "beam"):
        with tf.Graph().as_default():
            src, out, lens = _build(mode)
            with tf.Session() as sess:
                tf.train.Saver().restore(sess, ckpt)
                if mode == "greedy":
                    ids, got_lens = sess.run([out.sample_id, lens], {src: a})
                    assert ids.shape == (16, T + 1) and (got_lens == T + 1).all()
                    assert (ids == c).all(1).mean() > 0.9
                else:
                    ids, scores, parents, got_lens = sess.run(
                        [out.predicted_ids, out.beam_search_decoder_output.scores,
                         out.beam_search_decoder_output.parent_ids, lens], {src: a})
                    steps = ids.shape[1]
                    assert ids.shape == scores.shape == parents.shape == (16, steps, W)
                    assert got_lens.shape == (16, W) and steps >= T + 1
                    assert (ids[:, :T + 1, 0] == c).all(1).mean() > 0.9
                    assert (np.diff(scores[:, -1], axis=1) <= 1e-6).all()   # best beam first
                    assert (ids[:, T + 1:, 0] == EOS).all()


def test_beam_search_reorders_the_alignment_history_along_the_final_beams():
    b, t_mem, h, v, w, steps = 2, 4, 6, 7, 3, 5
    memory = np.random.RandomState(0).normal(size=(b, t_mem, h)).astype(np.float32)
    with tf.Graph().as_default():
        # NOTE: seeded: the test needs beams that cross, and with some initial weights (one
        # unseeded CI run; graph seed 4) no beam changes parent in 5 steps
        tf.set_random_seed(0)
        mechanism = seq2seq.LuongAttention(h, seq2seq.tile_batch(tf.constant(memory), w))
        cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(h), mechanism,
                                        alignment_history=True)
        emb = tf.get_variable("emb", [v, 5], initializer=tf.random_normal_initializer(seed=1))
        proj = tf.layers.Dense(v)
        results = []
        for reorder in (True, False):
            decoder = seq2seq.BeamSearchDecoder(cell, emb, tf.fill([b], 1), 2,
                                                cell.zero_state(b * w, tf.float32), w,
                                                output_layer=proj,
                                                reorder_tensor_arrays=reorder)
            out, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=steps)
            history = state.cell_state.alignment_history
            results.append((history if reorder else history.stack(),
                            out.beam_search_decoder_output.parent_ids, state.lengths))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            (sorted_h, parents, lengths), (raw_h, parents2, _) = sess.run(results)
    np.testing.assert_array_equal(parents, parents2)
    n = raw_h.shape[0]
    raw = raw_h.reshape(n, b, w, t_mem)
    expected = raw.copy()
    for i in range(b):
        last = int(lengths[i].max())
        for k in range(w):
            beam = k
            for t in range(min(last, n) - 1, -1, -1):
                if t < lengths[i, k]:
                    expected[t, i, k] = raw[t, i, beam]
                beam = parents[i, t, beam]
    assert not np.allclose(expected, raw)          # the beams did cross
    np.testing.assert_allclose(sorted_h.reshape(n, b, w, t_mem), expected, rtol=1e-6)
    np.testing.assert_allclose(sorted_h.sum(-1), 1.0, rtol=1e-5)
