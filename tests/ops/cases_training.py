"""Training ops update variables in place, so each is tested with variables, against numpy
references of TF's formulas, in tests/training/test_training_ops.py (the optimizers that use
them: tests/training/test_optimizers.py)."""

import tensorweave.runtime.kernels.cpu.training  # noqa: F401  (until cpu/__init__ imports it)
from tensorweave.ops import training_ops  # noqa: F401  (registers the ops)

CASES = []

_COVERED_BY = "tests/training/test_training_ops.py"
EXEMPT = {op: _COVERED_BY for op in [
    "ApplyGradientDescent", "ApplyMomentum", "SparseApplyMomentum", "ApplyAdam",
    "ApplyRMSProp", "SparseApplyRMSProp", "ApplyCenteredRMSProp", "SparseApplyCenteredRMSProp",
    "ApplyAdagrad", "SparseApplyAdagrad", "ApplyAdadelta", "SparseApplyAdadelta",
]}
EXEMPT.update({op: "tests/training/test_proximal_optimizers.py (TF's numbers, dense and sparse)"
               for op in ["ApplyFtrl", "SparseApplyFtrl", "ApplyFtrlV2", "SparseApplyFtrlV2",
                          "ApplyProximalAdagrad", "SparseApplyProximalAdagrad",
                          "ApplyProximalGradientDescent", "SparseApplyProximalGradientDescent"]})
