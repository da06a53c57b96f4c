"""A word2vec-style skip-gram model whose tables are sharded over the ps tasks, for TensorFlow
and tensorweave alike (every function takes the framework's `tf` module).

The embedding (vocab x dim), the NCE weights (vocab x dim) and biases (vocab) are each split
in `shards` parts (`fixed_size_partitioner`) that `replica_device_setter` places round-robin
over the ps tasks. A step looks up `batch` rows of the embedding and `batch + num_sampled`
rows of the NCE tables, each gather running on its shard's ps, and applies the sparse SGD
update there: what crosses the network is proportional to the batch, not the vocabulary.

The corpus is synthetic with structure to learn: a centre word `c` (Zipf-distributed, as
words are) has the context word `(c + k) % vocab` for k in CONTEXT_OFFSETS.
"""

from __future__ import annotations

import numpy as np

CONTEXT_OFFSETS = (1, 2)


class Word2Vec:
    """The graph of one worker (between-graph replication): placeholders `inputs` [None] and
    `labels` [None, 1], `loss`, `train_op`, `global_step`, the three partitioned variables."""

    def __init__(self, tf, cluster, task: int, vocab: int, dim: int = 64,
                 num_sampled: int = 64, shards: int = 2, lr: float = 1.0, scope: str = "w2v"):
        self.vocab = vocab
        setter = tf.train.replica_device_setter(cluster=cluster,
                                                worker_device=f"/job:worker/task:{task}")
        part = tf.fixed_size_partitioner(shards)
        with tf.device(setter), tf.variable_scope(scope):
            self.global_step = tf.train.get_or_create_global_step()
            self.inputs = tf.placeholder(tf.int64, [None], name="inputs")
            self.labels = tf.placeholder(tf.int64, [None, 1], name="labels")
            self.embeddings = tf.get_variable(
                "embeddings", [vocab, dim], partitioner=part,
                initializer=tf.random_uniform_initializer(-1.0, 1.0, seed=1))
            self.nce_weights = tf.get_variable(
                "nce_weights", [vocab, dim], partitioner=part,
                initializer=tf.truncated_normal_initializer(stddev=1.0 / dim ** 0.5, seed=2))
            self.nce_biases = tf.get_variable("nce_biases", [vocab], partitioner=part,
                                              initializer=tf.zeros_initializer())
            embed = tf.nn.embedding_lookup(self.embeddings, self.inputs)
            self.loss = tf.reduce_mean(tf.nn.nce_loss(
                weights=self.nce_weights, biases=self.nce_biases, labels=self.labels,
                inputs=embed, num_sampled=num_sampled, num_classes=vocab))
            opt = tf.train.GradientDescentOptimizer(lr)
            self.train_op = opt.minimize(self.loss, global_step=self.global_step)

    def feed(self, batch: int, rng: np.random.RandomState) -> dict:
        """A batch of (centre, context) pairs of the synthetic corpus."""
        centre = (rng.zipf(1.3, batch) - 1) % self.vocab
        offset = rng.choice(CONTEXT_OFFSETS, batch)
        return {self.inputs: centre.astype(np.int64),
                self.labels: ((centre + offset) % self.vocab).astype(np.int64)[:, None]}


__all__ = ["CONTEXT_OFFSETS", "Word2Vec"]
