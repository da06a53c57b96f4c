"""`tf.distribute.cluster_resolver`: clusters from TF_CONFIG, Slurm, or given
(distributed/cluster_resolver.py)."""

from tensorweave.distributed.cluster_resolver import (
    ClusterResolver,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TFConfigClusterResolver,
)

__all__ = ["ClusterResolver", "SimpleClusterResolver", "SlurmClusterResolver",
           "TFConfigClusterResolver"]
