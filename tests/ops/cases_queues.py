"""Queue and reader ops are stateful and block: covered by tests/queues/, not the harness."""

import tensorweave.runtime.kernels.cpu.queues  # noqa: F401 - registers kernels
import tensorweave.runtime.kernels.cpu.readers  # noqa: F401
from tensorweave.ops import queue_ops, reader_ops

CASES: list = []
EXEMPT = {op: "tests/queues/test_queues.py" for op in queue_ops.OP_TYPES}
EXEMPT.update({op: "tests/queues/test_readers.py" for op in reader_ops.OP_TYPES})
