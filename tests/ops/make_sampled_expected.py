"""Writes tests/data/sampled_expected.npz with TensorFlow: nce_loss and sampled_softmax_loss
on fixed sampled candidates (`sampled_values=`), their gradients, the candidate samplers'
expected counts, ComputeAccidentalHits, and the embedding lookups (sharded "mod"/"div",
embedding_lookup_sparse, safe_embedding_lookup_sparse).

    ~/.cache/tensorweave-tf-peer/bin/python tests/ops/make_sampled_expected.py

Inputs are stored beside the outputs (keys `in_*`), so the test feeds exactly these.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
OUT = Path(__file__).resolve().parents[1] / "data" / "sampled_expected.npz"

V, D, B, S = 12, 5, 4, 6


def _inputs():
    rng = np.random.default_rng(7)
    return {
        "in_weights": rng.normal(size=(V, D)).astype(np.float32),
        "in_biases": rng.normal(size=(V,)).astype(np.float32),
        "in_inputs": rng.normal(size=(B, D)).astype(np.float32),
        "in_labels1": np.array([[1], [4], [0], [9]], np.int64),
        "in_labels2": np.array([[1, 3], [4, 2], [0, 11], [9, 9]], np.int64),
        # sampled classes include true classes (accidental hits) and a repeat
        "in_sampled": np.array([3, 4, 10, 1, 7, 3], np.int64),
        "in_true_count1": rng.uniform(0.1, 1.0, size=(B, 1)).astype(np.float32),
        "in_true_count2": rng.uniform(0.1, 1.0, size=(B, 2)).astype(np.float32),
        "in_sampled_count": rng.uniform(0.1, 1.0, size=(S,)).astype(np.float32),
    }


def _losses(x, out):
    for loss_name, fn in (("nce", tf.nn.nce_loss), ("ssm", tf.nn.sampled_softmax_loss)):
        for num_true in (1, 2):
            for hits in (False, True):
                for strategy, shards in (("one", 1), ("mod", 3), ("div", 3)):
                    key = f"{loss_name}_t{num_true}_h{int(hits)}_{strategy}"
                    out.update(_one_loss(x, fn, num_true, hits, strategy, shards, key))


def _one_loss(x, fn, num_true, hits, strategy, shards, key):
    with tf.Graph().as_default(), tf.Session() as sess:
        w = tf.constant(x["in_weights"])
        weights = w if shards == 1 else _shard(x["in_weights"], shards, strategy)
        b = tf.constant(x["in_biases"])
        inputs = tf.constant(x["in_inputs"])
        sampled_values = (tf.constant(x["in_sampled"]),
                          tf.constant(x[f"in_true_count{num_true}"]),
                          tf.constant(x["in_sampled_count"]))
        loss = fn(weights=weights, biases=b, labels=tf.constant(x[f"in_labels{num_true}"]),
                  inputs=inputs, num_sampled=S, num_classes=V, num_true=num_true,
                  sampled_values=sampled_values, remove_accidental_hits=hits,
                  partition_strategy="mod" if strategy == "one" else strategy)
        wrt = [weights] if shards == 1 else list(weights)
        grads = tf.gradients(tf.reduce_sum(loss * tf.range(1.0, B + 1.0)), wrt + [b, inputs])
        dense = [tf.convert_to_tensor(g) for g in grads]
        values = sess.run([loss] + dense)
    res = {f"{key}_loss": values[0], f"{key}_db": values[-2], f"{key}_dinputs": values[-1]}
    for i, g in enumerate(values[1:-2]):
        res[f"{key}_dw{i}"] = g
    return res


def _shard(table, n, strategy):
    """`table` split into n shards as TF's partitioners lay them out for `strategy`."""
    rows = np.arange(table.shape[0])
    if strategy == "mod":
        return [tf.constant(table[rows % n == i]) for i in range(n)]
    sizes = [table.shape[0] // n + (1 if i < table.shape[0] % n else 0) for i in range(n)]
    starts = np.cumsum([0] + sizes)
    return [tf.constant(table[starts[i]:starts[i + 1]]) for i in range(n)]


def _samplers(out):
    """Expected counts of every class (true_classes = all ids) with unique=False, for which
    they do not depend on the random draws; and ComputeAccidentalHits."""
    all_ids = np.arange(V, dtype=np.int64).reshape(V, 1)
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.constant(all_ids)
        ops = {
            "uniform": tf.nn.uniform_candidate_sampler(t, 1, S, False, V),
            "log_uniform": tf.nn.log_uniform_candidate_sampler(t, 1, S, False, V),
            "learned": tf.nn.learned_unigram_candidate_sampler(t, 1, S, False, V),
            "fixed": tf.nn.fixed_unigram_candidate_sampler(
                t, 1, S, False, V, unigrams=list(np.arange(1.0, V + 1.0)), distortion=0.75),
            "fixed_reserved": tf.nn.fixed_unigram_candidate_sampler(
                t, 1, S, False, V, unigrams=list(np.arange(1.0, V - 1.0)), distortion=0.5,
                num_reserved_ids=2),
            "fixed_shard": tf.nn.fixed_unigram_candidate_sampler(
                t[:4], 1, S, False, 4, unigrams=list(np.arange(1.0, 9.0)), num_shards=2,
                shard=1),
            "all": tf.nn.all_candidate_sampler(t, 1, V, False),
        }
        for name, (cands, true_count, sampled_count) in ops.items():
            c, tc, sc = sess.run([cands, true_count, sampled_count])
            out[f"sampler_{name}_true_count"] = tc
            out[f"sampler_{name}_sampled"] = c
            out[f"sampler_{name}_sampled_count"] = sc
        hits = tf.nn.compute_accidental_hits(tf.constant(_inputs()["in_labels2"]),
                                             tf.constant(_inputs()["in_sampled"]), num_true=2)
        for name, v in zip(("indices", "ids", "weights"), sess.run(hits)):
            out[f"hits_{name}"] = v


def _embeddings(x, out):
    table = x["in_weights"]
    ids = np.array([[0, 11, 5], [3, 3, 7]], np.int64)
    out["in_ids"] = ids
    with tf.Graph().as_default(), tf.Session() as sess:
        for strategy in ("mod", "div"):
            for n in (2, 5):
                look = tf.nn.embedding_lookup(_shard(table, n, strategy), ids,
                                              partition_strategy=strategy)
                out[f"emb_{strategy}{n}"] = sess.run(look)
        sp_ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1], [3, 2]],
                                 tf.constant([1, 4, 4, 0, 11, 4], tf.int64), [5, 3])
        sp_w = tf.SparseTensor(sp_ids.indices, tf.constant([0.5, 2.0, 1.0, -1.0, 3.0, 0.25]),
                               sp_ids.dense_shape)
        for combiner in ("sum", "mean", "sqrtn"):
            for weighted in (False, True):
                w = sp_w if weighted else None
                r = tf.nn.embedding_lookup_sparse(tf.constant(table), sp_ids, w,
                                                  combiner=combiner)
                out[f"els_{combiner}_w{int(weighted)}"] = sess.run(r)
        safe_ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1]],
                                   tf.constant([1, -1, 4, 0, 11], tf.int64), [5, 2])
        safe_w = tf.SparseTensor(safe_ids.indices, tf.constant([0.5, 2.0, 0.0, 1.5, 3.0]),
                                 safe_ids.dense_shape)
        for combiner in ("sum", "mean", "sqrtn"):
            r = tf.nn.safe_embedding_lookup_sparse(
                _shard(table, 3, "div"), safe_ids, safe_w, combiner=combiner, default_id=2)
            out[f"safe_{combiner}"] = sess.run(r)
        r = tf.nn.safe_embedding_lookup_sparse(tf.constant(table), safe_ids, None)
        out["safe_mean_noweights"] = sess.run(r)


def main() -> None:
    x = _inputs()
    out = dict(x)
    _losses(x, out)
    _samplers(out)
    _embeddings(x, out)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
