"""Accumulator ops are stateful and block: covered by tests/ops/test_accumulators.py (against
TensorFlow's records) and tests/training/test_sync_replicas.py, not the harness."""

import tensorweave.runtime.kernels.cpu.accumulators  # noqa: F401 - registers kernels
from tensorweave.ops import accumulator_ops

CASES: list = []
EXEMPT = {op: "tests/ops/test_accumulators.py" for op in accumulator_ops.OP_TYPES}
