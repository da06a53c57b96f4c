"""`tf.sparse`."""

from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.ops.accumulator_ops import SparseConditionalAccumulator
from tensorweave.ops.parsing_ops import sparse_tensor_to_dense as to_dense
from tensorweave.ops.sparse_ops import (  # noqa: F401
    sparse_fill_empty_rows as fill_empty_rows, sparse_reshape as reshape,
    sparse_retain as retain, sparse_segment_mean as segment_mean,
    sparse_segment_sqrt_n as segment_sqrt_n, sparse_segment_sum as segment_sum,
)
from tensorweave.ops.sparse_ops import (  # noqa: F401
    sparse_add as add, sparse_concat as concat, sparse_reduce_sum as reduce_sum,
    sparse_reorder as reorder, sparse_slice as slice, sparse_softmax as softmax,
    sparse_tensor_dense_matmul as matmul, sparse_transpose as transpose,
)
from tensorweave.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul  # noqa: F401
from tensorweave.ops.sparse_ops import (  # noqa: F401
    sparse_maximum as maximum, sparse_minimum as minimum, sparse_reduce_max as reduce_max,
    sparse_split as split,
)
from tensorweave.ops.string_hash_ops import sparse_cross as cross
from tensorweave.ops.string_hash_ops import sparse_cross_hashed as cross_hashed
