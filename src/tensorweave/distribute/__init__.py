"""`tf.distribute` as far as TF1 programs use it: `tf.distribute.cluster_resolver`."""

from tensorweave.distribute import cluster_resolver

__all__ = ["cluster_resolver"]
