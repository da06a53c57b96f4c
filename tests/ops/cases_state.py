"""State ops need a variable to act on, so each is tested end to end in test_variables.py."""

import tensorweave.runtime.kernels.cpu.state  # noqa: F401  (until runtime.kernels.cpu imports it)
from tensorweave.ops import state_ops  # noqa: F401  (registers the ops)

CASES = []

_COVERED_BY = "tests/ops/test_variables.py"
EXEMPT = {op: _COVERED_BY for op in [
    "VariableV2", "Variable", "TemporaryVariable", "DestroyTemporaryVariable",
    "IsVariableInitialized", "Assign", "AssignAdd", "AssignSub", "ScatterUpdate", "ScatterAdd",
    "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax", "ScatterNdUpdate",
    "ScatterNdAdd", "ScatterNdSub", "CountUpTo",
]}
