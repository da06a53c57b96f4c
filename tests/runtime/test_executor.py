"""The executor: straight-line plans, errors that name the node, deadlines, aliasing."""

import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors, ir
from tensorweave.ops.apply import apply_op
from tensorweave.runtime.executor import Executor
from tensorweave.runtime.plan import Plan
from tensorweave.runtime.step import StepContext

tf.register_op("TestFailIfNegative", inputs=["x: float"], outputs=["y: float"],
               shape_fn=lambda ctx: ctx.input_shape(0))
tf.register_op("TestWaitForever", inputs=["x: float"], outputs=["y: float"], stateful=True,
               shape_fn=lambda ctx: ctx.input_shape(0))
tf.register_op("TestNumpyError", inputs=["x: float"], outputs=["y: float"],
               shape_fn=lambda ctx: ctx.input_shape(0))


@tf.register_kernel("TestFailIfNegative")
def _fail_if_negative(node):
    def run(x):
        if np.any(x < 0):
            raise errors.InvalidArgumentError(None, None, "negative input")
        return x

    return run


@tf.register_kernel("TestWaitForever", context=True)
def _wait(node):
    def run(ctx, x):
        while True:  # a blocking kernel: waits in slices and checks the step's deadline
            ctx.check()
            time.sleep(min(0.01, ctx.remaining(0.01)))

    return run


@tf.register_kernel("TestNumpyError")
def _numpy_error(node):
    return lambda x: np.reshape(x, (7, 7))


def test_kernel_error_names_node_op_and_site():
    x = tf.placeholder(tf.float32, [None])
    y = apply_op("TestFailIfNegative", x, name="check")
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(y, {x: [1.0]}), [1.0])
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            s.run(y, {x: [-1.0]})
    msg = str(e.value)
    assert "negative input" in msg and "[[node check (op TestFailIfNegative, defined at" in msg
    assert "test_executor.py" in msg
    assert e.value.op is y.op


def test_numpy_exception_becomes_invalid_argument():
    x = tf.placeholder(tf.float32, [3])
    y = apply_op("TestNumpyError", x, name="bad")
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError, match="node bad"):
        s.run(y, {x: [1.0, 2.0, 3.0]})


def test_step_timeout_ends_in_deadline_exceeded():
    x = tf.placeholder(tf.float32, [])
    y = apply_op("TestWaitForever", x, name="wait")
    opts = tf.RunOptions(timeout_in_ms=100)
    t = time.monotonic()
    with tf.Session() as s, pytest.raises(tf.errors.DeadlineExceededError, match="node wait"):
        s.run(y, {x: 1.0}, options=opts)
    assert time.monotonic() - t < 5


def test_operation_timeout_from_config():
    x = tf.placeholder(tf.float32, [])
    y = apply_op("TestWaitForever", x)
    cfg = tf.ConfigProto(operation_timeout_in_ms=50)
    with tf.Session(config=cfg) as s, pytest.raises(tf.errors.DeadlineExceededError):
        s.run(y, {x: 1.0})


def _graph(nodes):
    return ir.GraphDef(nodes=[ir.NodeDef(*n) for n in nodes])


def test_plan_orders_topologically_and_runs():
    g = _graph([
        ("ret", "_Retval", ["s"], "", {"T": tf.float32, "index": 0}),
        ("s", "Sin", ["a"], "", {"T": tf.float32}),
        ("a", "_Arg", [], "", {"T": tf.float32, "index": 0}),
    ])
    ex = Executor(Plan(g))
    out = ex.run([np.float32(0.5)], StepContext(1))
    assert out[0] == pytest.approx(np.sin(0.5))
    assert [it.name for it in ex.plan.items] == ["a", "s", "ret"]


def test_plan_rejects_unknown_inputs_and_cycles():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the graph"):
        Plan(_graph([("s", "Sin", ["zzz"], "", {"T": tf.float32})]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="cycle"):
        Plan(_graph([("a", "Sin", ["b"], "", {"T": tf.float32}),
                     ("b", "Sin", ["a"], "", {"T": tf.float32})]))


def test_missing_kernel_is_not_found():
    tf.register_op("TestNoKernel", outputs=["y: float"])
    with pytest.raises(tf.errors.NotFoundError, match="No registered 'TestNoKernel' OpKernel"):
        Plan(_graph([("n", "TestNoKernel", [], "", {})]))


def test_duplicate_registrations_say_where():
    with pytest.raises(ValueError, match="already registered"):
        tf.register_op("Sin", inputs=["x: float"], outputs=["y: float"])
    with pytest.raises(ValueError, match="already registered at .*kernels"):
        tf.register_kernel("Sin")(lambda node: None)


def test_fetched_identity_of_constant_is_a_copy():
    c = tf.constant([1.0, 2.0])
    i = tf.identity(c)
    with tf.Session() as s:
        v = s.run(i)
        v[0] = 9.0
        assert s.run(i)[0] == 1.0


def test_a_compiled_plan_with_parallel_waves_sends_before_it_receives():
    """CPU:1 has two independent MatMuls (a parallel wave) whose sum goes to CPU:0 and comes
    back doubled. Ordered by depth alone, CPU:1's receive (depth 0) would run first and wait
    for CPU:0, which waits for CPU:1's send: stuck until the deadline."""
    with tf.Graph().as_default():
        m = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
        with tf.device("/cpu:1"):
            a, b = tf.Variable(m), tf.Variable(m.T)    # variables: nothing is folded away
            s = tf.matmul(a, a) + tf.matmul(b, a)
        with tf.device("/cpu:0"):
            doubled = s * 2.0
        with tf.device("/cpu:1"):
            out = doubled + 1.0
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(out, options=tf.RunOptions(timeout_in_ms=5000))
    np.testing.assert_allclose(got, (m @ m + m.T @ m) * 2 + 1, rtol=1e-6)
