"""ops/function.py: the traced FunctionDef's structure, captures and the library."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import function


def test_trace_builds_args_body_and_retvals():
    traced = function.trace(lambda a, b: (a + b, a), [(tf.float32, [2]), (tf.float32, [2])])
    ops = [n.op for n in traced.fdef.nodes]
    assert ops.count("_Arg") == 2 and ops.count("_Retval") == 2 and "AddV2" in ops
    args = sorted(n.attrs["index"] for n in traced.fdef.nodes if n.op == "_Arg")
    assert args == [0, 1]
    assert traced.output_dtypes == [tf.float32, tf.float32]
    assert traced.output_shapes[0].as_list() == [2]
    assert traced.captures == []
    assert tf.get_default_graph().get_operations() == []   # nothing built outside


def test_captured_outer_tensor_becomes_extra_argument_run_by_executor():
    from tensorweave.runtime.kernels.cpu.dataset import FunctionRunner

    outer = tf.constant(np.float32(10))
    traced = function.trace(lambda x: x * outer + 1.0, [(tf.float32, [])])
    assert traced.captures == [outer]
    n_args = sum(n.op == "_Arg" for n in traced.fdef.nodes)
    assert n_args == 2
    run = FunctionRunner(traced.fdef, [np.float32(10)], "test")
    assert run((np.float32(2),), 0) == (np.float32(21),)


def test_outer_tensor_first_is_a_clear_error():
    outer = tf.constant(np.float32(10))
    with pytest.raises(ValueError, match="write the function's own tensor first"):
        function.trace(lambda x: outer * x, [(tf.float32, [])])


def test_add_to_graph_puts_function_in_graph_def_library():
    traced = function.trace(lambda x: x * 2, [(tf.int64, [])])
    attr = function.add_to_graph(tf.get_default_graph(), traced)
    assert attr.name == traced.fdef.name
    assert function.lookup_function(attr.name) is traced.fdef
    gd = tf.get_default_graph().as_graph_def()
    assert [f.signature.name for f in gd.library.function] == [attr.name]
