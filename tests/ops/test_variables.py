"""Variables, state ops, variable scopes and initializers, end to end."""

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.runtime.kernels.cpu.random  # noqa: F401  (until runtime.kernels.cpu imports it)
import tensorweave.runtime.kernels.cpu.state  # noqa: F401
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import init_ops, state_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops import variables as var_lib
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import OPS
from tensorweave.runtime.kernels.registry import KernelNode, has_kernel, lookup_kernel
from tensorweave.runtime.resources import Ref

Variable = var_lib.Variable


def requires(*names):
    """Skips unless each op type (`"Mul"`, with a CPU kernel) or public function
    (`"tf.zeros"`) exists yet: other op families are written in parallel."""
    missing = [n for n in names if not _exists(n)]
    return pytest.mark.skipif(bool(missing), reason=f"not registered yet: {missing}")


def _exists(name: str) -> bool:
    if not name.startswith("tf."):
        return name in OPS and has_kernel(name)
    obj = tf
    for part in name.split(".")[1:]:
        obj = getattr(obj, part, None)
    return obj is not None


def _ops():
    return {op.name: op.type for op in tf.get_default_graph().get_operations()}


# -- creation --------------------------------------------------------------------------------
def test_variable_ops_and_names():
    v = Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    v1 = Variable(1)
    assert v.name == "Variable:0" and v1.name == "Variable_1:0"
    assert _ops() == {
        "Variable/initial_value": "Const", "Variable": "VariableV2",
        "Variable/Assign": "Assign", "Variable/read": "Identity",
        "Variable_1/initial_value": "Const", "Variable_1": "VariableV2",
        "Variable_1/Assign": "Assign", "Variable_1/read": "Identity",
    }
    assert v.dtype == tf.float32_ref and v1.dtype == tf.int32_ref
    assert v.shape.as_list() == [2, 3] and v.get_shape() == v.op.outputs[0].shape
    assert v.op.type == "VariableV2" and v.op.get_attr("shape").as_list() == [2, 3]
    assert v.initializer.name == "Variable/Assign"
    assert v.value().name == "Variable/read:0" and v._ref().name == "Variable:0"
    assert v.value().op.get_attr("_class") == [b"loc:@Variable"]
    assert v.initial_value.op.name == "Variable/initial_value"
    assert repr(v) == "<tf.Variable 'Variable:0' shape=(2, 3) dtype=float32_ref>"


def test_variable_names_follow_name_scope_and_dtype():
    with tf.name_scope("outer"):
        v = Variable(np.zeros((2,), np.float64), name="w")
        w = Variable(3, name="w", dtype=tf.float32)
    assert v.name == "outer/w:0" and w.name == "outer/w_1:0"
    assert v.dtype == tf.float64_ref and w.dtype == tf.float32_ref


def test_callable_initial_value_goes_under_initializer_scope():
    with tf.device("/cpu:0"):
        v = Variable(lambda: tf.constant([1, 2, 3]), name="v")
    init = v.initial_value.op
    assert init.name == "v/Initializer/Const"
    assert init.device == ""  # TF creates it under device(None)
    assert v.op.device == "/device:CPU:0"


def test_variable_ignores_control_dependencies():
    c = tf.constant(1.0)
    with tf.control_dependencies([c]):
        v = Variable(2.0)
    assert v.op.control_inputs == [] and v.initializer.control_inputs == []


def test_variable_argument_errors():
    with pytest.raises(ValueError, match="initial_value must be specified"):
        Variable()
    with pytest.raises(ValueError, match="collections argument to Variable constructor"):
        Variable(1.0, collections="mine")
    with pytest.raises(ValueError, match="must have a shape specified"):
        Variable(tf.placeholder(tf.float32, [None, 2]))
    v = Variable(tf.placeholder_with_default([1.0, 2.0], [None]), validate_shape=False)
    assert v.shape.ndims is None


def test_collections():
    a = Variable(1.0, name="a")
    b = Variable(2.0, name="b", trainable=False)
    c = Variable(3.0, name="c", collections=[GraphKeys.LOCAL_VARIABLES])
    d = Variable(4.0, name="d", collections=["mine"], trainable=True)
    assert var_lib.global_variables() == [a, b]
    assert var_lib.all_variables() == [a, b]
    assert var_lib.trainable_variables() == [a, c, d]
    assert var_lib.local_variables() == [c]
    assert tf.get_collection("mine") == [d]
    assert var_lib.global_variables(scope="b") == [b]


# -- running ---------------------------------------------------------------------------------
def test_uninitialized_read_names_variable_and_creation_site():
    v = Variable(np.ones((2, 3), np.float32), name="weights")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(v)
    msg = str(info.value)
    assert "Attempting to use uninitialized value weights" in msg
    assert "weights/read" in msg
    assert "test_variables.py" in msg  # where the user created the reading op


def test_initializer_fetch_returns_copies():
    v = Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    inc = v.assign_add(np.ones((2, 3), np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        ref_value = sess.run(v._ref())
        assert v.eval(session=sess).tolist() == before.tolist()
        after = sess.run(inc)
        np.testing.assert_array_equal(before, np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(ref_value, np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(after, np.arange(6).reshape(2, 3) + 1)
        np.testing.assert_array_equal(sess.run(v), after)
        sess.run(inc)
        np.testing.assert_array_equal(after, np.arange(6).reshape(2, 3) + 1)


def test_feeding_a_variable_replaces_its_reads():
    v = Variable(np.array([1.0, 2.0], np.float32))
    y = tf.identity(v)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {v: [5.0, 6.0]}), [5.0, 6.0])
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [1.0, 2.0])


def test_caching_device_places_the_snapshot():
    v = Variable(1.0, caching_device="/cpu:0")
    assert v.value().device == "/device:CPU:0"
    assert "_class" not in v.value().op.node_def.attrs


def test_values_persist_per_session_only():
    v = Variable(5)
    inc = state_ops.assign_add(v, 2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(inc)
        sess.run(inc)
        assert sess.run(v) == 9
    with tf.Session() as sess:
        assert not sess.run(state_ops.is_variable_initialized(v))
        sess.run(v.initializer)
        assert sess.run(v) == 5


def test_assign_family_values():
    v = Variable(np.array([1.0, 2.0, 3.0], np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v.assign([4.0, 5.0, 6.0])), [4, 5, 6])
        np.testing.assert_array_equal(sess.run(v.assign_sub([1.0, 1.0, 1.0])), [3, 4, 5])
        np.testing.assert_array_equal(sess.run(state_ops.assign_add(v, [1.0, 2.0, 3.0])),
                                      [4, 6, 8])
        op = v.assign([0.0, 0.0, 0.0], read_value=False)
        assert op.type == "Assign" and sess.run(op) is None
        np.testing.assert_array_equal(sess.run(v), [0, 0, 0])


def test_assign_static_shape_check():
    v = Variable(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but are 2 "
                                         r"and 3.*'Assign' \(op: 'Assign'\)"):
        v.assign(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match="Shapes must be equal rank, but are 2 and 1"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="mutable tensor"):
        state_ops.assign(tf.constant(1.0), 2.0)


def test_assign_runtime_shape_check_and_validate_shape_false():
    v = Variable(np.zeros((2, 3), np.float32))
    ph = tf.placeholder(tf.float32)
    checked = state_ops.assign(v, ph)
    free = state_ops.assign(v, ph, validate_shape=False)
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"lhs shape= \[2,3\] rhs shape= \[4\]"):
            sess.run(checked, {ph: np.ones(4)})
        np.testing.assert_array_equal(sess.run(free, {ph: np.ones(4)}), np.ones(4))
        np.testing.assert_array_equal(sess.run(v), np.ones(4))


def _kernel(op_type, attrs):
    return lookup_kernel(op_type).factory(KernelNode("k", op_type, attrs, [], []))


def test_assign_stores_a_copy_and_updates_are_in_place():
    ref = Ref("v", tf.float32)
    value = np.arange(4, dtype=np.float32)
    _kernel("Assign", {"T": tf.float32, "validate_shape": True})(ref, value)
    stored = ref.value
    assert stored is not value and not np.shares_memory(stored, value)
    value[0] = 99.0
    assert stored[0] == 0.0
    _kernel("AssignAdd", {"T": tf.float32})(ref, np.ones(4, np.float32))
    _kernel("AssignSub", {"T": tf.float32})(ref, np.full(4, 0.5, np.float32))
    assert ref.value is stored and stored.tolist() == [0.5, 1.5, 2.5, 3.5]
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        _kernel("AssignAdd", {"T": tf.float32})(ref, np.ones(3, np.float32))


def test_update_of_uninitialized_variable_fails():
    v = Variable(np.ones(2, np.float32), name="counter")
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError,
                                             match="uninitialized value counter"):
        sess.run(v.assign_add([1.0, 1.0]))


def test_is_variable_initialized_and_count_up_to():
    v = Variable(0, name="n")
    ready = var_lib.is_variable_initialized(v)
    nxt = v.count_up_to(2)
    assert ready.dtype == tf.bool and ready.op.type == "IsVariableInitialized"
    assert nxt.shape.ndims == 0 and nxt.dtype == tf.int32
    with tf.Session() as sess:
        assert sess.run(ready) == np.False_
        sess.run(v.initializer)
        assert sess.run(ready) == np.True_
        assert [sess.run(nxt), sess.run(nxt)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(nxt)
        assert sess.run(v) == 2


class _Slices:
    def __init__(self, indices, values):
        self.indices, self.values = indices, values


@pytest.mark.parametrize("fn, ufunc", [
    (state_ops.scatter_add, np.add), (state_ops.scatter_sub, np.subtract),
    (state_ops.scatter_mul, np.multiply), (state_ops.scatter_div, np.divide),
    (state_ops.scatter_min, np.minimum), (state_ops.scatter_max, np.maximum),
])
def test_scatter_ops_match_numpy(fn, ufunc):
    init = np.arange(1, 16, dtype=np.float32).reshape(5, 3)
    idx = np.array([3, 0, 3], np.int32)  # repeated index: applied twice
    upd = np.arange(2, 11, dtype=np.float32).reshape(3, 3)
    v = Variable(init)
    out = fn(v, idx, upd)
    assert out.shape.as_list() == [5, 3]
    want = init.copy()
    ufunc.at(want, idx, upd)
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_allclose(sess.run(out), want, rtol=1e-6)


def test_scatter_update_and_errors():
    v = Variable(np.zeros((4, 2), np.int64))
    upd = v.scatter_update(_Slices(np.array([2, 0], np.int64), np.array([[1, 2], [3, 4]])))
    bad = state_ops.scatter_add(v, [7], [[1, 1]])
    scalar = state_ops.scatter_update(v, [1, 3], 9)
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal"):
        state_ops.scatter_update(v, [0], [[1, 2, 3]])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(upd), [[3, 4], [0, 0], [1, 2], [0, 0]])
        np.testing.assert_array_equal(sess.run(scalar)[[1, 3]], [[9, 9], [9, 9]])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 7 is not in "
                                                                 r"\[0, 4\)"):
            sess.run(bad)


def test_integer_scatter_div_truncates():
    v = Variable(np.array([7, -7, 9], np.int32))
    out = state_ops.scatter_div(v, [0, 1], [2, 2])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(out).tolist() == [3, -3, 9]


def test_scatter_nd_ops():
    v = Variable(np.zeros((3, 4), np.float32))
    idx = np.array([[0, 1], [2, 3], [0, 1]], np.int32)
    add = state_ops.scatter_nd_add(v, idx, np.array([1.0, 2.0, 3.0], np.float32))
    rows = v.scatter_nd_update(np.array([[1]]), np.full((1, 4), 5.0, np.float32))
    sub = state_ops.scatter_nd_sub(v, idx[:1], np.array([0.5], np.float32))
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(add)
        sess.run(rows)
        got = sess.run(sub)
    want = np.zeros((3, 4), np.float32)
    want[0, 1], want[2, 3], want[1] = 3.5, 2.0, 5.0
    np.testing.assert_array_equal(got, want)


def test_shared_name_shares_the_value():
    a = state_ops.variable_op_v2([2], tf.float32, name="a", shared_name="shared")
    b = state_ops.variable_op_v2([2], tf.float32, name="b", shared_name="shared")
    init = state_ops.assign(a, [1.0, 2.0])
    with tf.Session() as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])


def test_temporary_variable_lives_one_step():
    t = apply_op("TemporaryVariable", shape=[2], dtype=tf.float32, var_name="tmp")
    filled = state_ops.assign(t, [3.0, 4.0])
    done = apply_op("DestroyTemporaryVariable", filled, var_name="tmp")
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(done), [3.0, 4.0])


def test_load():
    v = Variable(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="default session"):
        v.load([1.0, 2.0, 3.0])
    with tf.Session() as sess:
        v.load([1.0, 2.0, 3.0], sess)
        np.testing.assert_array_equal(sess.run(v), [1, 2, 3])
        v.load([4.0, 5.0, 6.0])
        np.testing.assert_array_equal(v.eval(), [4, 5, 6])


@requires("tf.cond", "Switch", "Merge")
def test_initialized_value():
    a = Variable(np.array([1.0, 2.0], np.float32))
    b = Variable(a.initialized_value())
    with tf.Session() as sess:
        sess.run(b.initializer)  # a itself is still uninitialized
        np.testing.assert_array_equal(sess.run(b), [1.0, 2.0])
        sess.run(a.assign([5.0, 6.0]))
        sess.run(b.initializer)
        np.testing.assert_array_equal(sess.run(b), [5.0, 6.0])


# -- operators and conversion ----------------------------------------------------------------
@requires("Mul", "AddV2")
def test_operators_read_the_snapshot():
    v = Variable(np.array([1.0, 2.0], np.float32))
    y = v * 2.0 + v
    assert y.op.type == "AddV2"
    assert v.value() in y.op.inputs
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])
        np.testing.assert_array_equal(sess.run(1.0 + v), [2.0, 3.0])


def test_conversion():
    v = Variable(np.zeros(2, np.float32))
    assert tf.convert_to_tensor(v) is v.value()
    assert tf.convert_to_tensor(v, as_ref=True) is v._ref()
    with pytest.raises(ValueError, match="Incompatible type conversion requested to type "
                                         "'int32' for variable of type 'float32_ref'"):
        tf.convert_to_tensor(v, dtype=tf.int32)
    with pytest.raises(TypeError, match="not iterable"):
        iter(v)


# -- initializer ops over all variables ------------------------------------------------------
@requires("NoOp", "tf.group", "tf.no_op")
def test_global_and_local_initializers():
    a = Variable(1.0, name="a")
    b = Variable(lambda: tf.constant(2.0), name="b")
    loc = Variable(3.0, name="loc", collections=[GraphKeys.LOCAL_VARIABLES])
    init = var_lib.global_variables_initializer()
    local = var_lib.local_variables_initializer()
    assert init.name == "init" and local.name == "init_1"
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run([a, b]) == [1.0, 2.0]
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(loc)
        sess.run(local)
        assert sess.run(loc) == 3.0
    assert var_lib.variables_initializer([], name="nothing").type == "NoOp"


@requires("Pack", "LogicalNot", "tf.stack", "tf.logical_not", "tf.boolean_mask")
def test_report_uninitialized_variables():
    a = Variable(1.0, name="a")
    Variable(2.0, name="b")
    report = var_lib.report_uninitialized_variables()
    with tf.Session() as sess:
        assert sess.run(report).tolist() == [b"a", b"b"]
        sess.run(a.initializer)
        assert sess.run(report).tolist() == [b"b"]


# -- variable scopes -------------------------------------------------------------------------
def test_get_variable_names_and_reuse_errors():
    with vs.variable_scope("foo") as scope:
        v = vs.get_variable("v", [3, 4])
        assert v.name == "foo/v:0" and scope.name == "foo"
        assert scope.original_name_scope == "foo/"
        with pytest.raises(ValueError, match=r"^Variable foo/v already exists, disallowed\. Did "
                                             r"you mean to set reuse=True or "
                                             r"reuse=tf\.AUTO_REUSE in VarScope\?"):
            vs.get_variable("v", [3, 4])
    with vs.variable_scope("foo", reuse=True):
        assert vs.get_variable("v") is v
        with pytest.raises(ValueError, match=r"^Variable foo/w does not exist, or was not "
                                             r"created with tf\.get_variable\(\)\. Did you mean "
                                             r"to set reuse=tf\.AUTO_REUSE in VarScope\?$"):
            vs.get_variable("w", [1])
        with pytest.raises(ValueError, match=r"Trying to share variable foo/v, but specified "
                                             r"shape \(2, 4\) and found shape \(3, 4\)"):
            vs.get_variable("v", [2, 4])
        with pytest.raises(ValueError, match="specified dtype float64 and found dtype "
                                             "float32_ref"):
            vs.get_variable("v", dtype=tf.float64)


def test_auto_reuse_and_reuse_variables():
    with vs.variable_scope("s", reuse=vs.AUTO_REUSE):
        a = vs.get_variable("a", [2])
        assert vs.get_variable("a", [2]) is a
    with vs.variable_scope("t") as scope:
        b = vs.get_variable("b", [2])
        scope.reuse_variables()
        assert vs.get_variable("b") is b
        with vs.variable_scope("inner"):
            assert vs.get_variable_scope().reuse is True  # inherited


def test_reentering_scope_reuses_names_but_not_name_scopes():
    with vs.variable_scope("foo") as scope:
        c1 = tf.constant(1.0)
    with vs.variable_scope(scope, reuse=True) as again:
        c2 = tf.constant(1.0)
        assert vs.get_variable_scope().name == "foo"
    with vs.variable_scope("foo"):
        c3 = tf.constant(1.0)
        w = vs.get_variable("w", [1])
    assert [c1.op.name, c2.op.name, c3.op.name] == ["foo/Const", "foo_1/Const", "foo_2/Const"]
    assert again.original_name_scope == "foo/" and w.name == "foo/w:0"


def test_default_name_is_made_unique_and_nested():
    with vs.variable_scope(None, default_name="dense"):
        a = vs.get_variable("k", [1])
    with vs.variable_scope(None, default_name="dense"):
        b = vs.get_variable("k", [1])
        with vs.variable_scope("inner"):
            c = vs.get_variable("k", [1])
    assert [a.name, b.name, c.name] == ["dense/k:0", "dense_1/k:0", "dense_1/inner/k:0"]
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is "
                                        "required"):
        vs.variable_scope(None)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with vs.variable_scope(None, default_name="x", reuse=True):
            pass


def test_get_variable_ignores_name_scope():
    with tf.name_scope("ns"):
        v = vs.get_variable("v", [1])
    assert v.name == "v:0"
    assert v.initializer.name == "v/Assign"


def test_get_variable_initializer_forms():
    with vs.variable_scope("init", initializer=init_ops.constant_initializer(3.0)):
        a = vs.get_variable("a", [2])
        b = vs.get_variable("b", initializer=np.array([1, 2], np.int64))
        d = vs.get_variable("d", initializer=lambda: tf.constant([7.0]))
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        vs.get_variable("e", [2], initializer=np.zeros(2))
    assert b.dtype == tf.int64_ref and d.shape.as_list() == [1]
    with tf.Session() as sess:
        for v in (a, b, d):
            sess.run(v.initializer)
        assert sess.run(a).tolist() == [3.0, 3.0]
        assert sess.run(b).tolist() == [1, 2]
        assert sess.run(d).tolist() == [7.0]


def test_custom_getter_and_constraint():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name + "_x", *args, **kwargs)

    with vs.variable_scope("cg", custom_getter=getter):
        v = vs.get_variable("v", [1], constraint=abs)
    assert seen == ["cg/v"] and v.name == "cg/v_x:0" and v.constraint is abs


@requires("Mul")
def test_regularizer_losses():
    with vs.variable_scope("r", regularizer=lambda w: w * 0.5):
        v = vs.get_variable("v", [2])
        vs.get_variable("u", [2], regularizer=vs.no_regularizer)
    losses = tf.get_collection(GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1
    assert losses[0].op.name.startswith("r/v/Regularizer/")
    assert v.value() in losses[0].op.inputs


def test_default_glorot_uniform_statistics():
    v = vs.get_variable("w", [200, 300])
    names = [op.name for op in tf.get_default_graph().get_operations()]
    assert "w/Initializer/random_uniform/RandomUniform" in names
    with tf.Session() as sess:
        sess.run(v.initializer)
        x = sess.run(v)
    limit = np.sqrt(6.0 / 500)
    assert -limit <= x.min() and x.max() <= limit
    assert abs(float(x.mean())) < 0.005
    assert abs(float(x.std()) - limit / np.sqrt(3)) < 0.003


@requires("tf.zeros")
def test_default_initializer_for_ints_is_zeros():
    v = vs.get_variable("i", [2, 3], dtype=tf.int32)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v).tolist() == [[0, 0, 0], [0, 0, 0]]


@requires("tf.zeros")
def test_global_step():
    assert vs.get_global_step() is None
    step = vs.get_or_create_global_step()
    assert step.name == "global_step:0" and step.dtype == tf.int64_ref
    assert step.shape.ndims == 0 and not step.trainable
    assert tf.get_collection(GraphKeys.GLOBAL_STEP) == [step]
    assert vs.get_or_create_global_step() is step
    with pytest.raises(ValueError, match='"global_step" already exists'):
        vs.create_global_step()
    with tf.Session() as sess:
        sess.run(step.initializer)
        sess.run(state_ops.assign_add(step, 3))
        assert vs.global_step(sess, step) == 3


def test_global_step_must_be_integer_scalar():
    Variable(1.0, name="global_step")
    with pytest.raises(TypeError, match="does not have integer type"):
        vs.get_global_step()


# -- initializers ----------------------------------------------------------------------------
def _init_values(initializer, shape, dtype=tf.float32, graph_seed=None):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.get_default_graph().seed = graph_seed
        t = initializer(shape, dtype=dtype)
        with tf.Session(graph=g) as sess:
            return sess.run(t)


@pytest.mark.parametrize("make, check", [
    (lambda: init_ops.random_normal_initializer(1.0, 2.0, seed=3),
     lambda x: abs(x.mean() - 1.0) < 0.05 and abs(x.std() - 2.0) < 0.05),
    (lambda: init_ops.truncated_normal_initializer(0.0, 1.0, seed=3),
     lambda x: np.abs(x).max() < 2.0 and abs(x.std() - 0.8796) < 0.02),
    (lambda: init_ops.random_uniform_initializer(-1.0, 3.0, seed=3),
     lambda x: x.min() >= -1 and x.max() < 3 and abs(x.mean() - 1.0) < 0.05),
    (lambda: init_ops.uniform_unit_scaling_initializer(2.0, seed=3),
     lambda x: np.abs(x).max() <= 2 * np.sqrt(3 / 100)),
    (lambda: init_ops.variance_scaling_initializer(2.0, "fan_in", "untruncated_normal", seed=3),
     lambda x: abs(x.std() - np.sqrt(2.0 / 100)) < 0.005),
    (lambda: init_ops.variance_scaling_initializer(1.0, "fan_out", "normal", seed=3),
     lambda x: abs(x.std() - np.sqrt(1.0 / 200)) < 0.003 and
     np.abs(x).max() < 2 * np.sqrt(1.0 / 200) / 0.87962566),
    (lambda: init_ops.variance_scaling_initializer(3.0, "fan_avg", "uniform", seed=3),
     lambda x: np.abs(x).max() <= np.sqrt(9.0 / 150)),
    (lambda: init_ops.glorot_normal_initializer(seed=3),
     lambda x: abs(x.std() - np.sqrt(2.0 / 300)) < 0.003),
    (lambda: init_ops.he_uniform(seed=3), lambda x: np.abs(x).max() <= np.sqrt(6.0 / 100)),
    (lambda: init_ops.he_normal(seed=3), lambda x: abs(x.std() - np.sqrt(2.0 / 100)) < 0.005),
    (lambda: init_ops.lecun_uniform(seed=3), lambda x: np.abs(x).max() <= np.sqrt(3.0 / 100)),
    (lambda: init_ops.lecun_normal(seed=3), lambda x: abs(x.std() - np.sqrt(1.0 / 100)) < 0.003),
])
def test_random_initializer_statistics_and_seeds(make, check):
    x = _init_values(make(), [100, 200])
    assert x.shape == (100, 200) and x.dtype == np.float32
    assert check(x.astype(np.float64))
    np.testing.assert_array_equal(x, _init_values(make(), [100, 200]))


def test_unseeded_initializers_follow_the_graph_seed():
    a = _init_values(init_ops.glorot_uniform_initializer(), [4, 5], graph_seed=7)
    b = _init_values(init_ops.glorot_uniform_initializer(), [4, 5], graph_seed=7)
    c = _init_values(init_ops.glorot_uniform_initializer(), [4, 5], graph_seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_compute_fans_for_conv_kernels():
    assert init_ops._compute_fans([]) == (1, 1)
    assert init_ops._compute_fans([7]) == (7, 7)
    assert init_ops._compute_fans([3, 5]) == (3, 5)
    assert init_ops._compute_fans([3, 3, 16, 32]) == (144, 288)
    x = _init_values(init_ops.he_normal(seed=1), [3, 3, 16, 32])
    assert abs(float(x.std()) - np.sqrt(2.0 / 144)) < 0.01


def test_constant_and_identity_initializers():
    np.testing.assert_array_equal(
        _init_values(init_ops.constant_initializer([1, 2, 3, 4, 5, 6]), [2, 3]),
        [[1, 2, 3], [4, 5, 6]])
    x = _init_values(init_ops.constant_initializer(2), [2, 2], dtype=tf.int64)
    assert x.dtype == np.int64 and x.tolist() == [[2, 2], [2, 2]]
    np.testing.assert_array_equal(_init_values(init_ops.identity_initializer(gain=2.0), [2, 3]),
                                  2 * np.eye(2, 3))
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        init_ops.constant_initializer({"a": 1})
    with pytest.raises(ValueError, match="only be used for 2D matrices"):
        init_ops.identity_initializer()([2, 2, 2])


def test_initializer_argument_checks_and_config():
    with pytest.raises(ValueError, match="Expected floating point type"):
        init_ops.random_normal_initializer(dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid `mode` argument"):
        init_ops.variance_scaling_initializer(mode="fan_max")
    with pytest.raises(ValueError, match="`scale` must be positive float"):
        init_ops.variance_scaling_initializer(scale=0.0)
    cfg = init_ops.VarianceScaling(2.0, "fan_out", "uniform", seed=4).get_config()
    again = init_ops.VarianceScaling.from_config(cfg)
    assert (again.scale, again.mode, again.distribution, again.seed) == (2.0, "fan_out",
                                                                          "uniform", 4)


@requires("tf.zeros", "tf.ones")
def test_zeros_and_ones_initializers():
    assert _init_values(init_ops.zeros_initializer(), [2, 3]).tolist() == [[0.0] * 3] * 2
    x = _init_values(init_ops.ones_initializer(dtype=tf.int32), [3], dtype=None)
    assert x.dtype == np.int32 and x.tolist() == [1, 1, 1]


@requires("Qr", "tf.matrix_diag_part", "tf.sign", "tf.transpose", "tf.reshape", "Mul")
@pytest.mark.parametrize("shape", [[6, 4], [3, 8], [2, 3, 5]])
def test_orthogonal_initializer(shape):
    x = _init_values(init_ops.orthogonal_initializer(gain=2.0, seed=1), shape)
    flat = x.reshape(-1, shape[-1]).astype(np.float64)
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-4)
