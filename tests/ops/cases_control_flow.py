"""Harness cases for control-flow ops that can run on their own.

Loop ops, ref variants and TensorArrays need a loop, a variable or a handle around them:
they are EXEMPT here and tested in the files named below.
"""

import numpy as np

import tensorweave as tf
from tensorweave.ops import control_flow_ops as cf
from tensorweave.ops import script_ops, tensor_array_ops, while_loop  # noqa: F401
from tensorweave.runtime.kernels.cpu import control_flow, script, tensor_array  # noqa: F401
from tests.ops.harness import OpCase

_X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
_I = np.arange(12, dtype=np.int32).reshape(3, 4)
_B = np.array([[True, False, True]])


def _taken(pred: bool):
    """Switch x on a constant pred and fetch the taken output."""
    return lambda x: cf.switch(x, pred)[int(pred)]


def _merge_second(x, y):
    dead = cf.switch(x, False)[1]          # the untaken output: Merge picks y, index 1
    return list(cf.merge([dead, y]))


def _after(make_op):
    return lambda x: cf.with_dependencies([make_op(x)], x)


def _double(a):
    return np.asarray(a * 2, dtype=a.dtype)


CASES = [
    OpCase("Switch", _taken(True), [_X], lambda x: x, name="true-f32"),
    OpCase("Switch", _taken(False), [_I], lambda x: x, name="false-i32"),
    OpCase("Switch", _taken(True), [_B], lambda x: x, name="bool"),
    OpCase("Merge", _merge_second, [_X, _X + 1], lambda x, y: [y, np.int32(1)], name="f32"),
    OpCase("Merge", _merge_second, [_I, _I * 2], lambda x, y: [y, np.int32(1)], name="i32"),
    OpCase("LoopCond", cf.loop_cond, [np.array(True)], lambda x: x),
    OpCase("NoOp", _after(lambda x: cf.no_op()), [_X], lambda x: x),
    OpCase("ControlTrigger", _after(lambda x: cf.control_trigger()), [_I], lambda x: x),
    OpCase("Assert", _after(lambda x: cf.Assert(True, [x])), [_X], lambda x: x, name="f32"),
    OpCase("Assert", _after(lambda x: cf.Assert(True, [x])), [_I], lambda x: x, name="i32"),
    OpCase("PyFunc", lambda x: script_ops.py_func(_double, [x], tf.float32), [_X], _double,
           exact_static_shape=False),
    OpCase("PyFuncStateless",
           lambda x: script_ops.py_func(_double, [x], tf.int32, stateful=False), [_I], _double,
           exact_static_shape=False),
    OpCase("EagerPyFunc",
           lambda x: script_ops.py_function(lambda a: a.numpy() * 2, [x], tf.float32), [_X],
           _double, exact_static_shape=False),
]

_LOOPS = "tests/ops/test_control_flow.py (while_loop tests) and tests/runtime/test_dataflow.py"
_REFS = "tests/ops/test_control_flow.py::test_cond_and_loop_on_a_variable_use_ref_ops"
_TA = "tests/ops/test_tensor_array.py"

EXEMPT = {
    "Enter": _LOOPS, "Exit": _LOOPS, "NextIteration": _LOOPS,
    "RefSwitch": _REFS, "RefMerge": _REFS, "RefEnter": _REFS, "RefExit": _REFS,
    "RefNextIteration": _REFS,
    "Abort": "tests/ops/test_control_flow.py::test_abort_fails_the_step",
    "TensorArrayV3": _TA, "TensorArrayGradV3": _TA, "TensorArrayWriteV3": _TA,
    "TensorArrayReadV3": _TA, "TensorArrayGatherV3": _TA, "TensorArrayScatterV3": _TA,
    "TensorArrayConcatV3": _TA, "TensorArraySplitV3": _TA, "TensorArraySizeV3": _TA,
    "TensorArrayCloseV3": _TA,
}
