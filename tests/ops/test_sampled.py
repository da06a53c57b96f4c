"""nce_loss, sampled_softmax_loss, the candidate samplers and the embedding lookups against
numbers written by TensorFlow (make_sampled_expected.py -> tests/data/sampled_expected.npz)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

DATA = np.load(Path(__file__).resolve().parents[1] / "data" / "sampled_expected.npz")
V, D, B, S = 12, 5, 4, 6
LOSS_KEYS = sorted({k[:-len("_loss")] for k in DATA.files if k.endswith("_loss")})


def _shard(table, n, strategy):
    rows = np.arange(table.shape[0])
    if strategy == "mod":
        return [tf.constant(table[rows % n == i]) for i in range(n)]
    sizes = [table.shape[0] // n + (1 if i < table.shape[0] % n else 0) for i in range(n)]
    starts = np.cumsum([0] + sizes)
    return [tf.constant(table[starts[i]:starts[i + 1]]) for i in range(n)]


def _loss_graph(key):
    loss_name, t, h, strategy = key.split("_")
    num_true, hits = int(t[1:]), bool(int(h[1:]))
    fn = tf.nn.nce_loss if loss_name == "nce" else tf.nn.sampled_softmax_loss
    table = DATA["in_weights"]
    weights = tf.constant(table) if strategy == "one" else _shard(table, 3, strategy)
    b, inputs = tf.constant(DATA["in_biases"]), tf.constant(DATA["in_inputs"])
    sampled = (tf.constant(DATA["in_sampled"]), tf.constant(DATA[f"in_true_count{num_true}"]),
               tf.constant(DATA["in_sampled_count"]))
    loss = fn(weights=weights, biases=b, labels=tf.constant(DATA[f"in_labels{num_true}"]),
              inputs=inputs, num_sampled=S, num_classes=V, num_true=num_true,
              sampled_values=sampled, remove_accidental_hits=hits,
              partition_strategy="mod" if strategy == "one" else strategy)
    wrt = [weights] if strategy == "one" else list(weights)
    return loss, wrt, b, inputs


@pytest.mark.parametrize("key", LOSS_KEYS)
def test_loss_and_gradients_match_tensorflow(key):
    with tf.Graph().as_default():
        loss, wrt, b, inputs = _loss_graph(key)
        grads = tf.gradients(tf.reduce_sum(loss * tf.range(1.0, B + 1.0)), wrt + [b, inputs])
        assert all(isinstance(g, tf.IndexedSlices) for g in grads[:-1]), \
            "weights and biases gradients must stay IndexedSlices"
        with tf.Session() as sess:
            got = sess.run([loss] + [tf.convert_to_tensor(g) for g in grads])
    np.testing.assert_allclose(got[0], DATA[f"{key}_loss"], rtol=2e-5, atol=1e-5)
    for i, g in enumerate(got[1:-2]):
        np.testing.assert_allclose(g, DATA[f"{key}_dw{i}"], rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(got[-2], DATA[f"{key}_db"], rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(got[-1], DATA[f"{key}_dinputs"], rtol=2e-5, atol=1e-5)


def test_op_names_are_tensorflows():
    with tf.Graph().as_default() as g:
        loss, _, _, _ = _loss_graph("nce_t1_h0_one")
        w, b = tf.zeros([10, 3]), tf.zeros([10])
        x, y = tf.zeros([4, 3]), tf.zeros([4, 1], tf.int64)
        nce = tf.nn.nce_loss(w, b, y, x, 5, 10)
        names = {op.name: op.type for op in g.get_operations()}
    assert loss.name == "Reshape:0" and nce.name == "Reshape_1:0"  # TF: outside the scope
    for name, op_type in (("nce_loss_1/LogUniformCandidateSampler", "LogUniformCandidateSampler"),
                          ("nce_loss_1/embedding_lookup", "GatherV2"),
                          ("nce_loss_1/embedding_lookup_1", "GatherV2"),
                          ("nce_loss_1/MatMul", "MatMul"),
                          ("sampled_losses_1", "AddV2")):
        assert names.get(name) == op_type, (name, names.get(name))


def _sampler_ops(t):
    return {
        "uniform": tf.nn.uniform_candidate_sampler(t, 1, S, False, V),
        "log_uniform": tf.nn.log_uniform_candidate_sampler(t, 1, S, False, V),
        "learned": tf.nn.learned_unigram_candidate_sampler(t, 1, S, False, V),
        "fixed": tf.nn.fixed_unigram_candidate_sampler(
            t, 1, S, False, V, unigrams=list(np.arange(1.0, V + 1.0)), distortion=0.75),
        "fixed_reserved": tf.nn.fixed_unigram_candidate_sampler(
            t, 1, S, False, V, unigrams=list(np.arange(1.0, V - 1.0)), distortion=0.5,
            num_reserved_ids=2),
        "fixed_shard": tf.nn.fixed_unigram_candidate_sampler(
            t[:4], 1, S, False, 4, unigrams=list(np.arange(1.0, 9.0)), num_shards=2, shard=1),
        "all": tf.nn.all_candidate_sampler(t, 1, V, False),
    }


def test_sampler_expected_counts_match_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        ops = _sampler_ops(tf.constant(np.arange(V, dtype=np.int64).reshape(V, 1)))
        got = sess.run(ops)
    for name, (cands, true_count, sampled_count) in got.items():
        np.testing.assert_allclose(true_count, DATA[f"sampler_{name}_true_count"], rtol=1e-6,
                                   err_msg=name)
        assert cands.dtype == np.int64 and cands.shape == DATA[f"sampler_{name}_sampled"].shape
        # NOTE: with unique=False each sampled class's count is its true count's formula
        full = DATA[f"sampler_{name}_true_count"].reshape(-1)
        np.testing.assert_allclose(sampled_count, full[cands], rtol=1e-6, err_msg=name)
    np.testing.assert_array_equal(got["all"][0], np.arange(V))


def test_compute_accidental_hits_matches_tensorflow():
    with tf.Graph().as_default(), tf.Session() as sess:
        hits = tf.nn.compute_accidental_hits(tf.constant(DATA["in_labels2"]),
                                             tf.constant(DATA["in_sampled"]), num_true=2)
        got = sess.run(hits)
    for name, v in zip(("indices", "ids", "weights"), got):
        np.testing.assert_array_equal(v, DATA[f"hits_{name}"])
        assert v.dtype == DATA[f"hits_{name}"].dtype


def test_unique_sampling_draws_distinct_classes_and_tries_correction():
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.constant([[0], [1]], tf.int64)
        cands, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(
            t, 1, 8, True, 10, seed=3)
        c, tc, sc = sess.run([cands, true_count, sampled_count])
    assert len(set(c.tolist())) == 8
    p = np.log((c + 2.0) / (c + 1.0)) / np.log(11.0)
    # 1 - (1 - p)^tries for some tries >= 8: recover tries from one class, check all
    tries = np.log1p(-sc[0]) / np.log1p(-p[0])
    assert tries >= 8 - 1e-3
    np.testing.assert_allclose(sc, -np.expm1(tries * np.log1p(-p)), rtol=1e-4)
    assert tc.shape == (2, 1)


def test_seeded_sampler_replays_per_session_and_learns():
    with tf.Graph().as_default() as g:
        t = tf.constant([[3], [3]], tf.int64)
        a = tf.nn.uniform_candidate_sampler(t, 1, 5, False, 1000, seed=7)[0]
        learned = tf.nn.learned_unigram_candidate_sampler(t, 1, 2, False, 4, seed=1)
        with tf.Session(graph=g) as s1:
            first = [s1.run(a) for _ in range(2)]
            counts = [s1.run(learned[1])[0, 0] for _ in range(3)]
        with tf.Session(graph=g) as s2:
            again = [s2.run(a) for _ in range(2)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[1])
    # class 3 seen twice per step: weights 1,1,1,1 -> 1,1,1,3 -> 1,1,1,5 (p * 2 draws)
    np.testing.assert_allclose(counts, [2 * 1 / 4, 2 * 3 / 6, 2 * 5 / 8], rtol=1e-6)


def test_sampler_errors_name_the_problem():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank 2"):
            tf.nn.uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 1, 2, False, 5)
        bad = tf.nn.uniform_candidate_sampler(tf.constant([[9]], tf.int64), 1, 2, True, 5)
        small = tf.nn.uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 6, True, 5)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
                sess.run(bad)
            with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
                sess.run(small)


def test_fixed_unigram_reads_vocab_file(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,10\nof,5\nand,5\nzebra,0\n")
    with tf.Graph().as_default(), tf.Session() as sess:
        s = tf.nn.fixed_unigram_candidate_sampler(
            tf.constant([[0], [3]], tf.int64), 1, 2, False, 4, vocab_file=str(vocab))
        cands, tc, _ = sess.run(s)
    np.testing.assert_allclose(tc.reshape(-1), [2 * 10 / 20, 0.0])
    assert 3 not in cands.tolist()


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("n", [2, 5])
def test_sharded_embedding_lookup_matches_tensorflow(strategy, n):
    with tf.Graph().as_default() as g, tf.Session() as sess:
        out = tf.nn.embedding_lookup(_shard(DATA["in_weights"], n, strategy), DATA["in_ids"],
                                     partition_strategy=strategy)
        assert out.shape.as_list() == [2, 3, D]
        got = sess.run(out)
        whole = [op.name for op in g.get_operations() for o in op.outputs
                 if o.shape.as_list() == [V, D]]
        assert not whole, f"the whole table was built: {whole}"
    np.testing.assert_array_equal(got, DATA[f"emb_{strategy}{n}"])


def test_sharded_lookup_gradient_is_sparse_per_shard():
    with tf.Graph().as_default(), tf.Session() as sess:
        shards = _shard(DATA["in_weights"], 3, "div")
        out = tf.nn.embedding_lookup(shards, DATA["in_ids"], partition_strategy="div")
        grads = tf.gradients(tf.reduce_sum(out * out), shards)
        assert all(isinstance(gr, tf.IndexedSlices) for gr in grads)
        dense = sess.run([tf.convert_to_tensor(gr) for gr in grads])
    full = np.zeros_like(DATA["in_weights"])
    np.add.at(full, DATA["in_ids"].reshape(-1), 2 * DATA["in_weights"][DATA["in_ids"].reshape(-1)])
    np.testing.assert_allclose(np.concatenate(dense), full, rtol=1e-6)


def _sparse_ids():
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1], [3, 2]],
                          tf.constant([1, 4, 4, 0, 11, 4], tf.int64), [5, 3])
    weights = tf.SparseTensor(ids.indices, tf.constant([0.5, 2.0, 1.0, -1.0, 3.0, 0.25]),
                              ids.dense_shape)
    return ids, weights


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse_matches_tensorflow(combiner, weighted):
    with tf.Graph().as_default(), tf.Session() as sess:
        table = tf.constant(DATA["in_weights"])
        ids, weights = _sparse_ids()
        out = tf.nn.embedding_lookup_sparse(table, ids, weights if weighted else None,
                                            combiner=combiner)
        grad = tf.gradients(tf.reduce_sum(out), table)[0]
        assert isinstance(grad, tf.IndexedSlices)
        got = sess.run(out)
    np.testing.assert_allclose(got, DATA[f"els_{combiner}_w{int(weighted)}"], rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_safe_embedding_lookup_sparse_matches_tensorflow(combiner):
    with tf.Graph().as_default(), tf.Session() as sess:
        ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1]],
                              tf.constant([1, -1, 4, 0, 11], tf.int64), [5, 2])
        weights = tf.SparseTensor(ids.indices, tf.constant([0.5, 2.0, 0.0, 1.5, 3.0]),
                                  ids.dense_shape)
        out = tf.nn.safe_embedding_lookup_sparse(_shard(DATA["in_weights"], 3, "div"), ids,
                                                 weights, combiner=combiner, default_id=2)
        plain = tf.nn.safe_embedding_lookup_sparse(tf.constant(DATA["in_weights"]), ids, None)
        got, got_plain = sess.run([out, plain])
    np.testing.assert_allclose(got, DATA[f"safe_{combiner}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_plain, DATA["safe_mean_noweights"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op_name", ["sparse_segment_sum", "sparse_segment_mean",
                                     "sparse_segment_sqrt_n"])
def test_sparse_segment_gradients_match_finite_differences(op_name):
    from tensorweave.client.gradient_checker import compute_gradient_error

    data = np.random.default_rng(1).normal(size=(5, 3))
    with tf.Graph().as_default(), tf.Session():
        x = tf.constant(data)
        y = getattr(tf, op_name)(x, [0, 3, 3, 1], [0, 0, 2, 2])
        assert compute_gradient_error(x, [5, 3], y, [3, 3], x_init_value=data) < 1e-6


def test_fill_empty_rows_gradient_reaches_values_and_default():
    with tf.Graph().as_default(), tf.Session() as sess:
        values = tf.constant([1.0, 2.0])
        default = tf.constant(0.0)
        sp = tf.SparseTensor([[0, 0], [2, 0]], values, [4, 2])
        filled, empty = tf.sparse.fill_empty_rows(sp, default)
        loss = tf.reduce_sum(filled.values * tf.range(1.0, 5.0))
        dv, dd = sess.run(tf.gradients(loss, [values, default]))
        assert sess.run(empty).tolist() == [False, True, False, True]
    # entries in row order: (0,0)=v0 (1,0)=default (2,0)=v1 (3,0)=default
    np.testing.assert_allclose(dv, [1.0, 3.0])
    assert dd == pytest.approx(2.0 + 4.0)
