"""Cases for the ops the runtime itself owns."""

import numpy as np

import tensorweave as tf
from tests.ops.harness import OpCase

CASES = [
    OpCase("Const", lambda: tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3)), [],
           lambda: np.arange(6, dtype=np.float32).reshape(2, 3)),
    OpCase("Identity", tf.identity, [np.ones((2, 3), np.float32)], lambda x: x),
    OpCase("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, [2, 3]),
           [np.ones((2, 3), np.float32)], lambda x: x),
]

EXEMPT = {
    "_Arg": "tests/runtime/test_executor.py (every feed)",
    "_Retval": "tests/runtime/test_executor.py (every fetch)",
    "Placeholder": "tests/client/test_session.py (feeding)",
}
