"""cond, case, while_loop, group/tuple/with_dependencies, Assert, py_func: structure and values."""

import collections
import gc

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import control_flow_ops as cf
from tensorweave.ops import control_flow_util as util
from tensorweave.ops import script_ops, state_ops
from tensorweave.ops.while_loop import while_loop
from tensorweave.runtime.kernels.cpu import control_flow, script, tensor_array  # noqa: F401


def _ops(graph=None):
    return (graph or tf.get_default_graph()).get_operations()


def _by_name(name):
    return tf.get_default_graph().get_operation_by_name(name)


def _counting(log, tag, dtype=np.float32):
    """A py_func body that records its calls."""
    def f(*args):
        log.append(tag)
        return np.asarray(args[0], dtype=dtype) if args else np.asarray(0, dtype=dtype)
    return f


def _pf(log, tag, x, dtype=tf.float32):
    y = script_ops.py_func(_counting(log, tag, dtype.np_dtype), [x], dtype)
    y.set_shape(x.shape)
    return y


# -- cond: structure ------------------------------------------------------------------------
def test_cond_builds_switch_and_merge_with_tf_names():
    x = tf.placeholder(tf.float32, [2], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    r = cf.cond(p, lambda: x + 1.0, lambda: x * 2.0)
    names = {op.name: op.type for op in _ops()}
    for name, typ in [("cond/Switch", "Switch"), ("cond/switch_t", "Identity"),
                      ("cond/switch_f", "Identity"), ("cond/pred_id", "Identity"),
                      ("cond/Merge", "Merge")]:
        assert names[name] == typ
    assert r.op.name == "cond/Merge" and r.shape.as_list() == [2]
    add, mul = _by_name("cond/add"), _by_name("cond/mul")
    # x reaches each branch through its own Switch on pred_id, on the branch's side
    for op, side in ((add, 1), (mul, 0)):
        sw = op.inputs[0]
        assert sw.op.type == "Switch" and sw.value_index == side
        assert sw.op.inputs[0] is x and sw.op.inputs[1].op.name == "cond/pred_id"
    # constants in a branch hang off the branch pivot, so they are dead with it
    assert _by_name("cond/switch_t") in add.inputs[1].op.control_inputs
    assert _by_name("cond/switch_f") in mul.inputs[1].op.control_inputs
    assert [t.op for t in r.op.inputs] == [mul, add]
    assert len(tf.get_collection(GraphKeys.COND_CONTEXT)) == 2


def test_cond_runs_only_the_taken_branch():
    log = []
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: _pf(log, "true", x) + 1.0, lambda: _pf(log, "false", x) * 2.0)
    with tf.Session() as s:
        assert s.run(r, {x: 3.0, p: True}) == 4.0
        assert log == ["true"]
        assert s.run(r, {x: 3.0, p: False}) == 6.0
        assert log == ["true", "false"]


def test_cond_on_a_variable_runs_the_assignment_only_when_taken():
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: state_ops.assign_add(v, 1.0), lambda: tf.identity(v))
    with tf.Session() as s:
        s.run(v.initializer)
        assert [s.run(r, {p: b}) for b in (True, False, False, True)] == [1.0, 1.0, 1.0, 2.0]
        assert s.run(v) == 2.0
    assert {op.type for op in _ops()} >= {"RefSwitch", "AssignAdd"}


def test_cond_with_branch_made_only_of_constants():
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(5.0))
    with tf.Session() as s:
        assert s.run(r, {p: True}) == 1.0 and s.run(r, {p: False}) == 5.0


def test_cond_with_folded_constants_keeps_deadness():
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: tf.constant(1.0) + 2.0, lambda: tf.constant(5.0))
    with tf.Session() as s:
        assert s.run(r, {p: True}) == 3.0 and s.run(r, {p: False}) == 5.0


def test_nested_cond_and_a_merge_of_two_dead_inputs():
    log = []
    x = tf.placeholder(tf.float32, [])
    p, q = tf.placeholder(tf.bool, []), tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: cf.cond(q, lambda: _pf(log, "tt", x) + 10.0,
                                   lambda: _pf(log, "tf", x) + 20.0),
                lambda: _pf(log, "f", x) + 30.0)
    with tf.Session() as s:
        got = {(a, b): s.run(r, {x: 1.0, p: a, q: b}) for a in (True, False)
               for b in (True, False)}
    assert got == {(True, True): 11.0, (True, False): 21.0, (False, True): 31.0,
                   (False, False): 31.0}
    assert log == ["tt", "tf", "f", "f"]
    inner = [op for op in _ops() if op.type == "Switch" and op.name.startswith("cond/cond/")]
    assert inner, "the inner cond lives in the outer branch's scope"


def test_cond_returns_nested_structures_and_unpacks_singletons():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    Pair = collections.namedtuple("Pair", "a b")
    r = cf.cond(p, lambda: {"k": Pair(x, x + 1.0), "j": [x * 2.0]},
                lambda: {"k": Pair(x - 1.0, x), "j": [x * 3.0]})
    assert isinstance(r["k"], Pair) and isinstance(r["j"], list)
    single = cf.cond(p, lambda: [x], lambda: [x + 1.0])
    strict = cf.cond(p, lambda: [x], lambda: [x + 1.0], strict=True)
    assert isinstance(single, tf.Tensor) and isinstance(strict, list)
    with tf.Session() as s:
        out = s.run(r, {x: 1.0, p: False})
        assert out["k"] == Pair(0.0, 1.0) and out["j"] == [3.0]
        assert s.run(single, {x: 1.0, p: True}) == 1.0


def test_cond_accepts_a_python_bool_and_branch_values():
    r = cf.cond(True, lambda: 1.0, lambda: 2.0)
    r2 = cf.cond(False, lambda: tf.constant(1), lambda: 7)
    with tf.Session() as s:
        assert s.run([r, r2]) == [1.0, 7]


def test_cond_branch_returning_an_op_gives_the_pivot():
    log = []
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: cf.group(_pf(log, "t", x)), lambda: cf.no_op())
    assert r.dtype == tf.bool
    with tf.Session() as s:
        s.run(r, {x: 1.0, p: False})
        assert log == []
        s.run(r, {x: 1.0, p: True})
        assert log == ["t"]


def test_cond_fn1_fn2_compatibility():
    r = cf.cond(tf.constant(True), fn1=lambda: 1, fn2=lambda: 2)
    with tf.Session() as s:
        assert s.run(r) == 1
    with pytest.raises(TypeError, match="may not be set simultaneously"):
        cf.cond(True, true_fn=lambda: 1, false_fn=lambda: 2, fn1=lambda: 3)


# -- cond: errors ---------------------------------------------------------------------------
def test_cond_pred_must_be_a_bool_tensor_naming_the_switch():
    with pytest.raises(TypeError, match="'pred' of 'Switch' Op"):
        cf.cond(tf.constant(1.0), lambda: 1, lambda: 2)


def test_cond_pred_must_be_a_scalar_naming_the_op():
    with pytest.raises(ValueError, match=r"rank 0 but is rank 1 for 'cond/Switch'"):
        cf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)


@pytest.mark.parametrize("t_fn, f_fn, err, match", [
    (None, lambda: 1, TypeError, "true_fn argument required"),
    (lambda: 1, 3, TypeError, "false_fn must be callable"),
    (lambda: None, lambda: 1, ValueError, "true_fn must have a return value"),
    (lambda: (1, 2), lambda: 1, ValueError, "Incompatible return values"),
    (lambda: (1, 2), lambda: [1, 2], TypeError, "Incompatible return types"),
    (lambda: 1.0, lambda: 1, ValueError, "must have the same type: float32, int32"),
])
def test_cond_rejects_bad_branches(t_fn, f_fn, err, match):
    p = tf.placeholder(tf.bool, [])
    with pytest.raises(err, match=match):
        cf.cond(p, t_fn, f_fn)


# -- case -----------------------------------------------------------------------------------
def _needs(*modules_and_names):
    import importlib

    for mod, name in modules_and_names:
        try:
            if not hasattr(importlib.import_module(f"tensorweave.ops.{mod}"), name):
                pytest.skip(f"{mod}.{name} not available yet")
        except ImportError:
            pytest.skip(f"{mod} not available yet")


def test_case_picks_the_first_true_predicate_and_the_default():
    _needs(("joining_ops", "stack"), ("reduction_ops", "reduce_sum"))
    x = tf.placeholder(tf.int32, [])
    r = cf.case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(10))],
                default=lambda: tf.constant(100))
    r_ex = cf.case([(x < 0, lambda: tf.constant(-1)), (x > 5, lambda: tf.constant(5))],
                   default=lambda: tf.constant(0), exclusive=True)
    no_default = cf.case([(x < 0, lambda: tf.constant(-1)), (x < 10, lambda: tf.constant(9))])
    with tf.Session() as s:
        assert [s.run(r, {x: v}) for v in (-3, 3, 30)] == [-1, 10, 100]
        assert [s.run(r_ex, {x: v}) for v in (-3, 3, 30)] == [-1, 0, 5]
        assert s.run(no_default, {x: 3}) == 9
        with pytest.raises(errors.InvalidArgumentError, match="None of conditions"):
            s.run(no_default, {x: 30})


def test_case_argument_errors():
    with pytest.raises(TypeError, match="must be a list"):
        cf.case(lambda: 1)
    with pytest.raises(TypeError, match="pred must be a Tensor"):
        cf.case([(True, lambda: 1)])
    with pytest.raises(TypeError, match="2-tuple"):
        cf.case([(tf.constant(True),)])


# -- while_loop: structure and values ------------------------------------------------------
def test_while_loop_structure_and_frame():
    n = tf.placeholder(tf.int32, [], name="n")
    out = while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])
    names = {op.name: op for op in _ops()}
    for name, typ in [("while/Enter", "Enter"), ("while/Merge", "Merge"),
                      ("while/LoopCond", "LoopCond"), ("while/Switch", "Switch"),
                      ("while/Identity", "Identity"), ("while/NextIteration", "NextIteration"),
                      ("while/Exit", "Exit")]:
        assert names[name].type == typ
    enter = names["while/Enter"]
    assert enter.get_attr("frame_name") == b"while/while_context"
    assert enter.get_attr("is_constant") is False and enter.get_attr("parallel_iterations") == 10
    const_enters = [op for op in _ops() if op.type == "Enter" and op.get_attr("is_constant")]
    assert [op.inputs[0] for op in const_enters] == [n]       # n enters as a loop invariant
    merge = names["while/Merge"]
    assert [t.op.type for t in merge.inputs] == ["Enter", "NextIteration"]
    one = names["while/add"].inputs[1].op
    assert one.type == "Const" and names["while/Identity"] in one.control_inputs
    assert out.op.type == "Exit"
    assert len(tf.get_collection(GraphKeys.WHILE_CONTEXT)) == 1


@pytest.mark.parametrize("n", [0, 1, 5])
def test_while_loop_values(n):
    limit = tf.placeholder(tf.int32, [])
    i, acc = while_loop(lambda i, a: i < limit, lambda i, a: (i + 1, a * 2.0),
                        (tf.constant(0), tf.constant(1.5)))
    with tf.Session() as s:
        assert s.run([i, acc], {limit: n}) == [n, 1.5 * 2 ** n]


def test_while_loop_nested_structures_and_return_same_structure():
    Pair = collections.namedtuple("Pair", "i v")
    x = tf.placeholder(tf.float32, [3])
    out = while_loop(lambda p, d: p.i < 3,
                     lambda p, d: (Pair(p.i + 1, p.v + d["inc"]), d),
                     (Pair(tf.constant(0), x), {"inc": tf.constant([1.0, 2.0, 3.0])}))
    single = while_loop(lambda i: i < 2, lambda i: [i + 1], [tf.constant(0)],
                        return_same_structure=True)
    assert isinstance(out[0], Pair) and isinstance(out[1], dict) and isinstance(single, list)
    with tf.Session() as s:
        got = s.run(out, {x: [0.0, 0.0, 1.0]})
        assert got[0].i == 3
        np.testing.assert_array_equal(got[0].v, [3.0, 6.0, 10.0])
        assert s.run(single) == [2]


def test_while_loop_maximum_iterations():
    n = tf.placeholder(tf.int32, [])
    out = while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)], maximum_iterations=4)
    two = while_loop(lambda i, j: True, lambda i, j: [i + 1, j - 1],
                     [tf.constant(0), tf.constant(0)], maximum_iterations=3)
    with tf.Session() as s:
        assert s.run(out, {n: 2}) == 2 and s.run(out, {n: 10}) == 4
        assert s.run(two) == [3, -3]
    assert _by_name("while/iteration_counter").type == "Const"


def test_while_loop_with_zero_iterations_never_runs_the_body():
    log = []
    out = while_loop(lambda i: i < 0, lambda i: _pf(log, "body", i, tf.int32) + 1,
                     [tf.constant(0)])
    with tf.Session() as s:
        assert s.run(out) == 0 and log == []


def test_stateful_ops_in_a_loop_run_once_per_iteration():
    log = []
    v = tf.Variable(0.0)

    def body(i):
        with tf.control_dependencies([state_ops.assign_add(v, 1.0),
                                      _pf(log, "step", tf.cast(i, tf.float32))]):
            return i + 1

    out = while_loop(lambda i: i < 7, body, [tf.constant(0)])
    with tf.Session() as s:
        s.run(v.initializer)
        assert s.run(out) == 7
        assert s.run(v) == 7.0 and log == ["step"] * 7
    assert any(op.type == "RefEnter" for op in _ops())


def test_cond_inside_a_loop_body():
    log = []
    w = tf.placeholder(tf.float32, [])           # from outside both: Enter, then Switch

    def body(i, acc):
        even = tf.equal(tf.floormod(i, 2), 0)
        acc = cf.cond(even, lambda: _pf(log, "even", acc) + w,
                      lambda: _pf(log, "odd", acc) - 10.0)
        return i + 1, acc

    out = while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(0.0)])
    w_switch = [op for op in _ops() if op.type == "Switch" and op.inputs[0].op.type == "Enter"
                and op.inputs[0].op.inputs[0] is w]
    assert len(w_switch) == 1 and w_switch[0].name.startswith("while/cond/")
    with tf.Session() as s:
        assert s.run(out, {w: 1.0}) == (5, -17.0)
    assert log == ["even", "odd", "even", "odd", "even"]


def test_loop_inside_an_untaken_cond_branch_does_not_run():
    log = []
    p = tf.placeholder(tf.bool, [])
    n = tf.placeholder(tf.int32, [])

    def loop():
        return while_loop(lambda i: i < n, lambda i: _pf(log, "body", i, tf.int32) + 1,
                          [tf.constant(0)])

    r = cf.cond(p, loop, lambda: tf.constant(-1))
    with tf.Session() as s:
        assert s.run(r, {p: False, n: 4}) == -1 and log == []
        assert s.run(r, {p: True, n: 4}) == 4 and log == ["body"] * 4


def test_nested_while_loops():
    n = tf.placeholder(tf.int32, [])

    def outer(i, total):
        _, t = while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + 1), [0, total])
        return i + 1, t

    out = while_loop(lambda i, t: i < n, outer, [tf.constant(0), tf.constant(0)])
    frames = {op.get_attr("frame_name") for op in _ops() if op.type == "Enter"}
    assert frames == {b"while/while_context", b"while/while/while_context"}
    with tf.Session() as s:
        assert s.run(out, {n: 5}) == (5, 10)


def test_loop_invariant_used_in_body_enters_once_as_constant():
    w = tf.placeholder(tf.float32, [2])
    out = while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + w * w),
                     [tf.constant(0), tf.zeros_like(w) if hasattr(tf, "zeros_like")
                      else tf.constant([0.0, 0.0])])
    enters = [op for op in _ops() if op.type == "Enter" and op.inputs[0] is w]
    assert len(enters) == 1 and enters[0].get_attr("is_constant") is True
    mul = _by_name("while/mul")
    assert mul.inputs[0] is enters[0].outputs[0]
    assert _by_name("while/Identity") in mul.control_inputs    # invariant-only op: per iteration
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(out, {w: [1.0, 2.0]})[1], [3.0, 12.0])


def test_control_dependencies_around_and_inside_a_loop():
    log = []
    x = tf.placeholder(tf.float32, [])
    before = _pf(log, "before", x)
    zero = tf.constant(0)
    with tf.control_dependencies([before]):
        out = while_loop(lambda i: i < 2, lambda i: i + 1, [zero])
    assert before.op in _by_name("while/Enter").control_inputs
    outside = _pf(log, "outside", x)

    def body(i):
        with tf.control_dependencies([outside]):
            return i + 1

    out2 = while_loop(lambda i: i < 2, body, [tf.constant(0)])
    one = _by_name("while_1/add/y")                  # made in the block, so it carries the dep
    assert outside.op not in one.control_inputs      # pulled in through Enter + Identity
    pivot = _by_name("while_1/Identity")
    pulled = [c for c in one.control_inputs if c is not pivot]
    assert pivot in one.control_inputs and len(pulled) == 1
    assert pulled[0].type == "Identity" and pulled[0].inputs[0].op.type == "Enter"
    assert pulled[0].inputs[0].op.inputs[0] is outside
    with tf.Session() as s:
        assert s.run(out, {x: 1.0}) == 2 and log == ["before"]
        assert s.run(out2, {x: 1.0}) == 2 and log == ["before", "outside"]


def test_parallel_iterations_is_an_attr_of_every_enter():
    while_loop(lambda i: i < 2, lambda i: i + tf.constant(1), [tf.constant(0)],
               parallel_iterations=1)
    assert all(op.get_attr("parallel_iterations") == 1 for op in _ops() if op.type == "Enter")


# -- while_loop: shapes and errors ---------------------------------------------------------
def test_shape_change_without_invariant_is_an_error():
    x = tf.constant([1.0])
    with pytest.raises(ValueError) as e:
        while_loop(lambda v: True, lambda v: v + tf.constant([1.0, 2.0]), [x])
    msg = str(e.value)
    assert "Input tensor 'Const:0' enters the loop with shape (1,), but has shape (2,) after " \
           "one iteration" in msg and "shape_invariants" in msg


def test_shape_invariants_relax_the_loop_variable_shape():
    x = tf.placeholder(tf.float32, [1])
    out = while_loop(lambda v: True, lambda v: v + tf.constant([1.0, 2.0]), [x],
                     shape_invariants=[tf.TensorShape([None])], maximum_iterations=1)
    assert out.shape.as_list() == [None]
    assert _by_name("while/Merge_1").outputs[0].shape.as_list() == [None]   # Merge: counter
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(out, {x: [1.0]}), [2.0, 3.0])
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        while_loop(lambda v: True, lambda v: v, [x], shape_invariants=[tf.TensorShape([2])])


@pytest.mark.parametrize("cond, body, loop_vars, kwargs, err, match", [
    (lambda i: i < 2, lambda i: i + 1, [], {}, ValueError, "No loop variables"),
    (1, lambda i: i, [0], {}, TypeError, "cond must be callable"),
    (lambda i: i < 2, None, [0], {}, TypeError, "body must be callable"),
    (lambda i: i < 2, lambda i: i + 1, [0], {"parallel_iterations": 0}, TypeError,
     "parallel_iterations must be a positive"),
    (lambda i: i < 2, lambda i: tf.cast(i, tf.float32), [0], {}, TypeError,
     "has type int32 before the loop, but the body returns float32"),
    (lambda i, j: i < 2, lambda i, j: i, [0, 1], {}, ValueError, "same"),
])
def test_while_loop_errors(cond, body, loop_vars, kwargs, err, match):
    with pytest.raises(err, match=match):
        while_loop(cond, body, loop_vars, **kwargs)


# -- refs -----------------------------------------------------------------------------------
def test_cond_and_loop_on_a_variable_use_ref_ops():
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    r = cf.cond(p, lambda: state_ops.assign_add(v, 1.0), lambda: state_ops.assign_sub(v, 1.0))
    assert r.op.type == "RefMerge"
    # a hand-built loop whose variable is the ref itself: RefEnter/RefMerge/RefSwitch/
    # RefNextIteration/RefExit
    ref = v.op.outputs[0]
    assert ref.dtype.is_ref_dtype
    enter = cf.enter(ref, "ref_loop")
    m = cf.merge([enter, enter])[0]
    limit = cf.enter(tf.constant(5.0), "ref_loop", is_constant=True)
    f, t = cf.ref_switch(m, cf.loop_cond(m < limit))
    two = cf.enter(tf.constant(2.0), "ref_loop", is_constant=True)
    util.update_input(m.op, 1, cf.next_iteration(state_ops.assign_add(t, two)))
    out = cf.exit(f)
    assert [enter.op.type, m.op.type, out.op.type] == ["RefEnter", "RefMerge", "RefExit"]
    assert m.op.inputs[1].op.type == "RefNextIteration"
    with tf.Session() as s:
        s.run(v.initializer)
        assert [s.run(r, {p: b}) for b in (True, True, False)] == [1.0, 2.0, 1.0]
        assert s.run(out) == 5.0 and s.run(v) == 5.0      # 1 → 3 → 5


# -- group, tuple, with_dependencies, Assert, Abort ----------------------------------------
def test_group_runs_every_input_and_is_named_group_deps():
    log = []
    x = tf.placeholder(tf.float32, [])
    g = cf.group(_pf(log, "a", x), _pf(log, "b", x))
    assert g.type == "NoOp" and g.name == "group_deps" and len(g.control_inputs) == 2
    assert cf.group(name="nothing").type == "NoOp"
    with pytest.raises(ValueError, match="Unknown keyword"):
        cf.group(x, bad=1)
    with tf.Session() as s:
        assert s.run(g, {x: 1.0}) is None
    assert sorted(log) == ["a", "b"]


def test_optimizer_keeps_control_inputs_of_a_fetched_identity():
    log = []
    x = tf.placeholder(tf.float32, [])
    y = cf.with_dependencies([_pf(log, "dep", x)], x)
    with tf.Session() as s:
        assert s.run(y, {x: 1.0}) == 1.0 and log == ["dep"]


def test_tuple_gates_every_output_on_all_inputs():
    log = []
    x = tf.placeholder(tf.float32, [])
    a, b = _pf(log, "a", x), _pf(log, "b", x)
    ta, tb = cf.tuple([a, b])
    assert ta.op.name == "tuple/control_dependency" and ta.op.type == "Identity"
    assert [c.name for c in ta.op.control_inputs] == ["tuple/group_deps"]
    with tf.Session() as s:
        assert s.run(ta, {x: 2.0}) == 2.0
    assert sorted(log) == ["a", "b"]                 # fetching one ran both
    with pytest.raises(ValueError, match="at least one Tensor"):
        cf.tuple([None])


def test_with_dependencies_runs_the_dependencies_first():
    log = []
    x = tf.placeholder(tf.float32, [])
    y = cf.with_dependencies([_pf(log, "dep", x)], x + 1.0)
    assert y.op.type == "Identity" and y.op.name == "control_dependency"
    with tf.Session() as s:
        assert s.run(y, {x: 1.0}) == 2.0 and log == ["dep"]


def test_assert_passes_or_fails_with_the_data():
    c = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.int32, [3])
    f = tf.placeholder(tf.float32, [2, 2])
    ok = cf.Assert(c, ["x is", x])
    guarded = cf.Assert(c, ["f =", f], summarize=3)
    assert ok.type == "Assert" and ok.name == "Assert/Assert"
    # float data: the Assert sits in the false branch of a cond, as in TF
    assert guarded.type == "Merge" and _by_name("Assert_1/AssertGuard/Assert").type == "Assert"
    with tf.Session() as s:
        s.run([ok, guarded], {c: True, x: [1, 2, 3], f: np.ones((2, 2))})
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"assertion failed: \[x is\] \[-1 2 3\]"):
            s.run(ok, {c: False, x: [-1, 2, 3]})
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"assertion failed: \[f =\] \[\[-1 2\]\[3\.\.\.\]\.\.\.\]"):
            s.run(guarded, {c: False, f: [[-1.0, 2.0], [3.0, 4.5]]})


def test_abort_fails_the_step():
    a = cf.abort(error_msg="stop here")
    with tf.Session() as s, pytest.raises(errors.AbortedError, match="stop here"):
        s.run(a)


# -- py_func ---------------------------------------------------------------------------------
def test_py_func_values_dtypes_and_errors():
    x = tf.placeholder(tf.float32, [2])
    two = script_ops.py_func(lambda a: (a * 2, np.int32(len(a))), [x], [tf.float32, tf.int32])
    bad = script_ops.py_func(lambda a: a.astype(np.float64), [x], tf.float32)
    wrong_count = script_ops.py_func(lambda a: (a, a), [x], [tf.float32])
    raises = script_ops.py_func(_raiser(StopIteration()), [x], tf.float32)
    none = script_ops.py_func(lambda a: None, [x], [])
    assert two[0].op.type == "PyFunc" and two[0].op.get_attr("token").startswith(b"pyfunc_")
    assert isinstance(none, tf.Operation)
    with tf.Session() as s:
        a, n = s.run(two, {x: [1.0, 2.0]})
        np.testing.assert_array_equal(a, [2.0, 4.0])
        assert n == 2
        with pytest.raises(errors.InvalidArgumentError, match="0-th value returned by pyfunc"):
            s.run(bad, {x: [1.0, 2.0]})
        with pytest.raises(errors.InvalidArgumentError, match="returns 2 values"):
            s.run(wrong_count, {x: [1.0, 2.0]})
        with pytest.raises(errors.OutOfRangeError):
            s.run(raises, {x: [1.0, 2.0]})
        s.run(none, {x: [1.0, 2.0]})


def _raiser(exc):
    def f(*args):
        raise exc
    return f


def test_py_func_tokens_are_local_to_the_process_and_released_with_the_graph():
    g = tf.Graph()
    with g.as_default():
        y = script_ops.py_func(lambda a: a, [tf.constant(1.0)], tf.float32)
        token = y.op.get_attr("token").decode()
    assert script_ops.lookup(token) is not None
    script_ops._py_funcs.remove(token)           # as in another process: no such token
    with tf.Session(graph=g) as s, pytest.raises(errors.NotFoundError,
                                                 match="not registered in this process"):
        s.run(y)
    g2 = tf.Graph()
    with g2.as_default():
        token2 = script_ops.py_func(lambda a: a, [tf.constant(1.0)],
                                    tf.float32).op.get_attr("token").decode()
    assert token2 != token and script_ops.lookup(token2) is not None
    del g, g2, y
    gc.collect()
    assert script_ops.lookup(token2) is None
