"""Op families: schemas (OpDefs with shape functions) and their Python wrappers.

Importing this package registers every op type and, through `runtime.kernels.cpu`, every
CPU kernel.
"""

from tensorweave.ops import array_ops, constant_op, function_ops, math_ops  # noqa: F401
from tensorweave.runtime.kernels import cpu  # noqa: F401
