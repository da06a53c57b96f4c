"""Ops with state that have no gradient (TF's state_grad.py and the NotDifferentiable lines
of random_ops.py, script_ops.py and tensor_array_grad.py): variables and their updates,
random number generators, py_func, and the TensorArray bookkeeping ops.
"""

from __future__ import annotations

from tensorweave.autodiff.registry import NotDifferentiable

_VARIABLE_UPDATES = (
    "Assign", "AssignAdd", "AssignSub", "ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv",
    "ScatterUpdate", "ScatterMax", "ScatterMin", "ScatterNdUpdate", "ScatterNdAdd",
    "ScatterNdSub", "ScatterNdMul", "ScatterNdDiv", "CountUpTo", "IsVariableInitialized",
    "DestroyTemporaryVariable",
)
_RANDOM = ("RandomStandardNormal", "ParameterizedTruncatedNormal", "TruncatedNormal",
           "RandomUniform", "RandomUniformInt", "RandomShuffle", "Multinomial")
_SCRIPT = ("PyFunc", "PyFuncStateless")
_TENSOR_ARRAY = ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3",
                 "TensorArrayCloseV3")

for _name in _VARIABLE_UPDATES + _RANDOM + _SCRIPT + _TENSOR_ARRAY:
    NotDifferentiable(_name)

__all__: list[str] = []
