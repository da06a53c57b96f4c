"""StringFormat in the harness (TF's texts for it: test_check_ops.py)."""

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops.harness import OpCase

CASES = [
    OpCase("StringFormat",
           lambda a, b: apply_op("StringFormat", [a, b], template="a={} b={}!",
                                 placeholder="{}", summarize=2),
           [np.arange(6, dtype=np.int32).reshape(2, 3), np.float32(0.5)],
           lambda a, b: np.array(b"a=[[0 1 2]\n [3 4 5]] b=0.5!", dtype=object)),
]

EXEMPT = {"PrintV2": "tests/ops/test_check_ops.py::test_print_to_streams_and_file (no outputs)"}
