"""`tf.sparse`."""

from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.accumulator_ops import SparseConditionalAccumulator
from tensorweave.ops.parsing_ops import sparse_tensor_to_dense as to_dense
from tensorweave.ops.string_hash_ops import sparse_cross as cross
from tensorweave.ops.string_hash_ops import sparse_cross_hashed as cross_hashed
