"""Dataset and iterator ops: stateful (variant/resource outputs), covered by their own tests."""

import tensorweave.runtime.kernels.cpu.dataset  # noqa: F401 - registers kernels
import tensorweave.runtime.kernels.cpu.dataset_iterator  # noqa: F401
from tensorweave.ops import dataset_ops

CASES = []

_COVERED_BY = "tests/data_pipeline/"
EXEMPT = {op: _COVERED_BY for op in dataset_ops.OP_TYPES}
