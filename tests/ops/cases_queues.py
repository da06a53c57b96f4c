"""Queue and reader ops are stateful and block: covered by tests/queues/, not the harness."""

import tensorweave.runtime.kernels.cpu.queues  # noqa: F401 - registers kernels
from tensorweave.ops import queue_ops

CASES: list = []
EXEMPT = {op: "tests/queues/test_queues.py" for op in queue_ops.OP_TYPES}
