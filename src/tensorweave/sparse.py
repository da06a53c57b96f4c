"""`tf.sparse`."""

from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.accumulator_ops import SparseConditionalAccumulator
from tensorweave.ops.parsing_ops import sparse_tensor_to_dense as to_dense
from tensorweave.ops.sparse_ops import (  # noqa: F401
    sparse_fill_empty_rows as fill_empty_rows, sparse_reshape as reshape,
    sparse_retain as retain, sparse_segment_mean as segment_mean,
    sparse_segment_sqrt_n as segment_sqrt_n, sparse_segment_sum as segment_sum,
)
