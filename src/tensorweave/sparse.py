"""`tf.sparse`."""

from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.accumulator_ops import SparseConditionalAccumulator
from tensorweave.ops.parsing_ops import sparse_tensor_to_dense as to_dense
