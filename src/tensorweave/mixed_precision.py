"""`tf.mixed_precision` (TF1) and `tf.train.experimental`: loss scales and the mixed-precision
optimizer wrapper (training/mixed_precision.py)."""

from tensorweave.training.mixed_precision import (  # noqa: F401
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
