"""Optimizers: TF1's names (slots, update ops, collections), apply_gradients behaviour, and
training runs compared with numbers TensorFlow produced (tests/training/make_expected.py).

Tests that need `tensorweave.autodiff.gradients` or `IndexedSlices` skip, naming what is missing,
until those exist; everything else uses hand-made gradient tensors.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import tensorweave as tf

# NOTE: kernel modules not yet imported by runtime/kernels/cpu/__init__.py.
import tensorweave.runtime.kernels.cpu.control_flow  # noqa: F401
import tensorweave.runtime.kernels.cpu.creation  # noqa: F401
import tensorweave.runtime.kernels.cpu.gather  # noqa: F401
import tensorweave.runtime.kernels.cpu.joining  # noqa: F401
import tensorweave.runtime.kernels.cpu.nn  # noqa: F401
import tensorweave.runtime.kernels.cpu.training  # noqa: F401
from tensorweave.training import learning_rate_decay, optimizers
from tensorweave.training.optimizer import Optimizer
from tests.training import make_expected as mx

for _grad_module in ("array_grad", "math_grad", "nn_grad"):
    # NOTE: gradient modules that tensorweave.autodiff does not import itself yet.
    try:
        __import__(f"tensorweave.autodiff.{_grad_module}")
    except ImportError:
        pass

TRAIN = types.SimpleNamespace(**{n: getattr(optimizers, n) for n in optimizers.__all__},
                              exponential_decay=learning_rate_decay.exponential_decay)
NAMES = json.loads(mx.NAMES.read_text())
EXPECTED = np.load(mx.NPZ)


def _missing(module: str, attr: str) -> str | None:
    try:
        mod = __import__(module, fromlist=[attr])
    except ImportError:
        return f"{module}.{attr} does not exist yet"
    return None if hasattr(mod, attr) else f"{module}.{attr} does not exist yet"


NO_GRADIENTS = _missing("tensorweave.autodiff.gradients", "gradients")
NO_SLICES = _missing("tensorweave.ops.indexed_slices", "IndexedSlices")
needs_gradients = pytest.mark.skipif(NO_GRADIENTS is not None, reason=str(NO_GRADIENTS))
needs_slices = pytest.mark.skipif(NO_SLICES is not None, reason=str(NO_SLICES))


def _init(sess):
    sess.run([v.initializer for v in tf.global_variables()])


def _two_vars():
    with tf.variable_scope("dense"):
        k = tf.get_variable("kernel", [2, 3])
        b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
    return k, b


def _ones_grads():
    return [tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.ones(3, np.float32))]


# -- names, slots, collections: exactly TF1's --------------------------------------------------
@pytest.mark.parametrize("cfg", sorted(mx.DENSE_CONFIGS))
def test_names_match_tensorflow(cfg):
    graph = tf.get_default_graph()
    k, b = _two_vars()
    gs = tf.train.get_or_create_global_step()
    grads = _ones_grads()
    first = len(graph.get_operations())
    opt = mx.make_optimizer(TRAIN, mx.DENSE_CONFIGS[cfg], gs)
    train_op = opt.apply_gradients(list(zip(grads, [k, b])), global_step=gs)
    ops = graph.get_operations()[first:]
    want = NAMES[cfg]
    assert sorted([op.name, op.type] for op in ops) == want["ops"]
    assert train_op.name == want["train_op"]
    assert [v.name for v in opt.variables()] == want["variables"]
    assert opt.get_slot_names() == want["slot_names"]
    colocation = sorted([op.name, [g.decode() for g in op.colocation_groups()]] for op in ops
                        if op.type == "VariableV2" or op.type.startswith("Apply"))
    assert colocation == want["colocation"]


@pytest.mark.parametrize("cls,slots", [
    (lambda: optimizers.AdamOptimizer(), {"m": "Adam", "v": "Adam_1"}),
    (lambda: optimizers.MomentumOptimizer(0.1, 0.9), {"momentum": "Momentum"}),
    (lambda: optimizers.RMSPropOptimizer(0.1), {"rms": "RMSProp", "momentum": "RMSProp_1"}),
    (lambda: optimizers.RMSPropOptimizer(0.1, centered=True),
     {"rms": "RMSProp", "mg": "RMSProp_1", "momentum": "RMSProp_2"}),
    (lambda: optimizers.AdagradOptimizer(0.1), {"accumulator": "Adagrad"}),
    (lambda: optimizers.AdadeltaOptimizer(), {"accum": "Adadelta", "accum_update": "Adadelta_1"}),
])
def test_slots(cls, slots):
    k, b = _two_vars()
    opt = cls()
    opt.apply_gradients(zip(_ones_grads(), [k, b]))
    trainable = tf.trainable_variables()
    for slot, suffix in slots.items():
        s = opt.get_slot(k, slot)
        assert s.op.name == f"dense/kernel/{suffix}"
        assert s.get_shape().as_list() == [2, 3] and s.dtype.base_dtype == tf.float32
        assert s in tf.global_variables() and s not in trainable
        assert s.op.colocation_groups() == [b"loc:@dense/kernel"]
    assert opt.get_slot(k, "nope") is None
    assert sorted(opt.get_slot_names()) == sorted(slots)


def test_slot_initial_values():
    k, b = _two_vars()
    rms = optimizers.RMSPropOptimizer(0.1)
    ada = optimizers.AdagradOptimizer(0.1, initial_accumulator_value=0.25)
    rms.apply_gradients(zip(_ones_grads(), [k, b]))
    ada.apply_gradients(zip(_ones_grads(), [k, b]))
    with tf.Session() as sess:
        _init(sess)
        np.testing.assert_array_equal(sess.run(rms.get_slot(k, "rms")), np.ones((2, 3)))
        np.testing.assert_array_equal(sess.run(rms.get_slot(k, "momentum")), np.zeros((2, 3)))
        np.testing.assert_array_equal(sess.run(ada.get_slot(b, "accumulator")), [0.25] * 3)


def test_adam_beta_powers_advance_after_updates():
    k, b = _two_vars()
    opt = optimizers.AdamOptimizer(0.1, beta1=0.5, beta2=0.25)
    op = opt.apply_gradients(zip(_ones_grads(), [k, b]))
    b1, b2 = opt._get_beta_accumulators()
    assert (b1.op.name, b2.op.name) == ("beta1_power", "beta2_power")
    assert b1 not in tf.trainable_variables() and b1 in tf.global_variables()
    with tf.Session() as sess:
        _init(sess)
        before = sess.run(b)
        for _ in range(3):
            sess.run(op)
        np.testing.assert_allclose(sess.run([b1, b2]), [0.5 ** 4, 0.25 ** 4])
        # bias-corrected Adam with a constant gradient moves by lr per step
        np.testing.assert_allclose(sess.run(b), before - 0.3, rtol=1e-5)


def test_second_apply_reuses_slots():
    k, b = _two_vars()
    opt = optimizers.MomentumOptimizer(0.1, 0.9)
    op1 = opt.apply_gradients(zip(_ones_grads(), [k, b]))
    op2 = opt.apply_gradients(zip(_ones_grads(), [k, b]))
    assert (op1.name, op2.name) == ("Momentum", "Momentum_1")
    assert len(opt.variables()) == 2 and op2.type == "NoOp"


# -- apply_gradients behaviour -----------------------------------------------------------------
def test_global_step_incremented_after_updates():
    k, b = _two_vars()
    gs = tf.train.get_or_create_global_step()
    op = optimizers.GradientDescentOptimizer(0.5).apply_gradients(
        zip(_ones_grads(), [k, b]), global_step=gs, name="train")
    assert op.name == "train" and op.type == "AssignAdd"
    assert op.colocation_groups() == [b"loc:@global_step"]
    graph = tf.get_default_graph()
    # as in TF: the increment's constant input carries the dependency on the updates
    update = graph.get_operation_by_name("train/update")
    assert graph.get_operation_by_name("train/value").control_inputs == [update]
    assert op in tf.get_collection(tf.GraphKeys.TRAIN_OP)
    with tf.Session() as sess:
        _init(sess)
        for _ in range(2):
            sess.run(op)
        assert sess.run(gs) == 2
        np.testing.assert_allclose(sess.run(b), [-1.0] * 3)


def test_none_gradients_are_skipped():
    k, b = _two_vars()
    op = optimizers.GradientDescentOptimizer(1.0).apply_gradients(
        [(None, k), (tf.constant(np.ones(3, np.float32)), b)])
    assert not any("update_dense/kernel" in o.name for o in tf.get_default_graph()
                   .get_operations())
    with tf.Session() as sess:
        _init(sess)
        before = sess.run(k)
        sess.run(op)
        np.testing.assert_array_equal(sess.run(k), before)
        np.testing.assert_array_equal(sess.run(b), [-1.0] * 3)


def test_apply_gradients_errors():
    k, b = _two_vars()
    opt = optimizers.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, k), (None, b)])
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        opt.apply_gradients([([1.0, [2.0]], k)])
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        optimizers.GradientDescentOptimizer(0.1, name="")
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        optimizers.AdagradOptimizer(0.1, initial_accumulator_value=0.0)


@pytest.mark.parametrize("make_lr", [lambda: 0.5, lambda: tf.constant(0.5),
                                     lambda: (lambda: tf.constant(0.5))])
def test_learning_rate_kinds(make_lr):
    k, b = _two_vars()
    op = optimizers.MomentumOptimizer(make_lr(), momentum=lambda: 0.0).apply_gradients(
        zip(_ones_grads(), [k, b]))
    with tf.Session() as sess:
        _init(sess)
        sess.run(op)
        np.testing.assert_allclose(sess.run(b), [-0.5] * 3)


def test_float64_variables_cast_hyperparameters():
    v = tf.Variable(np.ones(3), name="v")
    op = optimizers.AdamOptimizer(0.1).apply_gradients([(tf.constant(np.ones(3)), v)])
    apply = tf.get_default_graph().get_operation_by_name("Adam/update_v/ApplyAdam")
    assert apply.get_attr("T") == tf.float64
    with tf.Session() as sess:
        _init(sess)
        sess.run(op)
        np.testing.assert_allclose(sess.run(v), [0.9] * 3)


def test_subclass_template():
    """A user optimizer written TF1-style: a zeros slot and an `_apply_dense` of assign ops."""
    from tensorweave.ops import control_flow_ops

    class SignSGD(Optimizer):
        def __init__(self, lr):
            super().__init__(False, "SignSGD")
            self._lr = lr

        def _create_slots(self, var_list):
            for v in var_list:
                self._zeros_slot(v, "count", self._name)

        def _apply_dense(self, grad, var):
            step = tf.assign_sub(var, self._lr * tf.sign(grad))
            count = tf.assign_add(self.get_slot(var, "count"), grad * 0.0 + 1.0)
            return control_flow_ops.group(step, count)

    _, b = _two_vars()
    opt = SignSGD(0.25)
    op = opt.apply_gradients([(tf.constant(np.array([-3.0, 0.0, 2.0], np.float32)), b)])
    count = opt.get_slot(b, "count")
    assert count.op.name == "dense/bias/SignSGD"
    with tf.Session() as sess:
        _init(sess)
        sess.run(op)
        sess.run(op)
        np.testing.assert_allclose(sess.run(b), [0.5, 0.0, -0.5])
        np.testing.assert_allclose(sess.run(count), [2.0] * 3)


# -- compute_gradients / minimize --------------------------------------------------------------
def test_compute_gradients_argument_errors():
    _two_vars()
    loss = tf.constant(1.0)
    opt = optimizers.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        opt.compute_gradients(loss, gate_gradients=7)
    with pytest.raises(ValueError, match="Invalid type"):
        opt.compute_gradients(tf.constant(1))


def test_compute_gradients_without_variables():
    with pytest.raises(ValueError, match="No variables to optimize"):
        optimizers.GradientDescentOptimizer(0.1).compute_gradients(tf.constant(1.0))


def _train(build, config, steps):
    # NOTE: the inputs TF saw, as stored (not regenerated: numpy's RNG could change).
    data = {k[len("data/"):]: EXPECTED[k] for k in EXPECTED.files if k.startswith("data/")}
    loss = build(tf, data)
    gs = tf.train.get_or_create_global_step()
    opt = mx.make_optimizer(TRAIN, config, gs)
    train_op = opt.minimize(loss, global_step=gs)
    out = {}
    with tf.Session() as sess:
        _init(sess)
        losses = []
        for _ in range(steps):
            losses.append(sess.run(loss))
            sess.run(train_op)
        out["loss"] = np.array(losses, np.float32)
        for v in tf.global_variables():
            out[v.op.name] = sess.run(v)
    return out


def _compare(prefix, got):
    want = {k[len(prefix):]: EXPECTED[k] for k in EXPECTED.files if k.startswith(prefix)}
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=1e-4, atol=1e-6, err_msg=prefix + k)


@needs_gradients
@pytest.mark.parametrize("cfg", sorted(mx.DENSE_CONFIGS))
def test_mlp_matches_tensorflow(cfg):
    got = _train(mx.build_dense, mx.DENSE_CONFIGS[cfg], mx.DENSE_STEPS)
    assert got["loss"][-1] < got["loss"][0]
    _compare(f"dense/{cfg}/", got)


@needs_gradients
@needs_slices
@pytest.mark.parametrize("cfg", sorted(mx.SPARSE_CONFIGS))
def test_sparse_gradients_match_tensorflow(cfg):
    _compare(f"sparse/{cfg}/", _train(mx.build_sparse, mx.SPARSE_CONFIGS[cfg],
                                      mx.SPARSE_STEPS))


@needs_gradients
def test_minimize_with_disconnected_loss_fails():
    _two_vars()
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your"):
        optimizers.GradientDescentOptimizer(0.1).minimize(tf.constant(1.0) * 2.0)


@needs_gradients
@pytest.mark.parametrize("gate", [Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH])
def test_gating_keeps_values(gate):
    k, b = _two_vars()
    loss = tf.reduce_sum(k * 2.0) + tf.reduce_sum(b * 3.0)
    gv = optimizers.GradientDescentOptimizer(0.1).compute_gradients(loss, gate_gradients=gate)
    assert [v for _, v in gv] == [k, b]
    with tf.Session() as sess:
        _init(sess)
        gk, gb = sess.run([g for g, _ in gv])
    np.testing.assert_allclose(gk, np.full((2, 3), 2.0))
    np.testing.assert_allclose(gb, np.full(3, 3.0))


# -- sparse updates from hand-made IndexedSlices ---------------------------------------------
def _slices(values, indices, dense_shape):
    from tensorweave.ops.indexed_slices import IndexedSlices

    return IndexedSlices(tf.constant(np.asarray(values, np.float32)),
                         tf.constant(np.asarray(indices, np.int32)),
                         tf.constant(np.asarray(dense_shape, np.int32)))


@needs_slices
def test_sparse_gradient_descent_uses_scatter_sub():
    v = tf.Variable(np.zeros((4, 2), np.float32), name="v")
    g = _slices([[1, 1], [2, 2], [4, 4]], [3, 0, 3], [4, 2])
    op = optimizers.GradientDescentOptimizer(0.5).apply_gradients([(g, v)])
    types_ = {o.type for o in tf.get_default_graph().get_operations()}
    assert "ScatterSub" in types_
    with tf.Session() as sess:
        _init(sess)
        sess.run(op)
        np.testing.assert_allclose(sess.run(v), [[-1, -1], [0, 0], [0, 0], [-2.5, -2.5]])


@needs_slices
@pytest.mark.parametrize("cls", [lambda: optimizers.AdagradOptimizer(0.1),
                                 lambda: optimizers.MomentumOptimizer(0.1, 0.9),
                                 lambda: optimizers.RMSPropOptimizer(0.1),
                                 lambda: optimizers.AdadeltaOptimizer(1.0),
                                 lambda: optimizers.AdamOptimizer(0.1)])
def test_sparse_duplicates_equal_dense_sum(cls):
    """Repeated indices are summed before the update, so a sparse gradient with duplicates
    updates exactly like its dense equivalent."""
    init = np.arange(8, dtype=np.float32).reshape(4, 2) / 8
    dense_v = tf.Variable(init, name="dense_v")
    sparse_v = tf.Variable(init, name="sparse_v")
    dense_g = np.zeros((4, 2), np.float32)
    dense_g[1] = [3.0, 4.0]
    dense_g[2] = [0.5, -1.0]
    sparse_g = _slices([[1, 1], [0.5, -1], [2, 3]], [1, 2, 1], [4, 2])
    op_dense = cls().apply_gradients([(tf.constant(dense_g), dense_v)])
    op_sparse = cls().apply_gradients([(sparse_g, sparse_v)])
    with tf.Session() as sess:
        _init(sess)
        for _ in range(2):
            sess.run([op_dense, op_sparse])
        got_dense, got_sparse = sess.run([dense_v, sparse_v])
    rows = [1, 2]
    np.testing.assert_allclose(got_sparse[rows], got_dense[rows], rtol=1e-5)


@needs_gradients
@needs_slices
def test_gate_graph_keeps_indexed_slices():
    params = tf.Variable(np.ones((4, 2), np.float32), name="params")
    w = tf.Variable(np.ones(2, np.float32), name="w")
    loss = tf.reduce_sum(tf.gather(params, tf.constant([1, 3, 1])) * w)
    opt = optimizers.GradientDescentOptimizer(0.5)
    gv = opt.compute_gradients(loss, gate_gradients=Optimizer.GATE_GRAPH)
    assert type(gv[0][0]).__name__ == "IndexedSlices" and gv[1][1] is w
    op = opt.apply_gradients(gv)
    with tf.Session() as sess:
        _init(sess)
        sess.run(op)
        np.testing.assert_allclose(sess.run(params), [[1, 1], [0, 0], [1, 1], [0.5, 0.5]])
        np.testing.assert_allclose(sess.run(w), [-0.5, -0.5])


@needs_gradients
def test_minimize_var_list_and_grad_loss():
    k, b = _two_vars()
    loss = tf.reduce_sum(b * 2.0) + tf.reduce_sum(k)
    op = optimizers.GradientDescentOptimizer(1.0).minimize(
        loss, var_list=[b], grad_loss=tf.constant(0.5))
    with tf.Session() as sess:
        _init(sess)
        before = sess.run(k)
        sess.run(op)
        np.testing.assert_array_equal(sess.run(k), before)
        np.testing.assert_allclose(sess.run(b), [-1.0] * 3)


def test_global_step_fetched_beside_minimize_is_the_value_after_the_step():
    """TF 2.21 with ref variables (tf.disable_v2_behavior(), TF1's default) gives 1, 2, 3:
    the fetch is the variable itself, whose buffer the increment updates in place. TF gives
    0, 1, 2 only with resource variables (ReadVariableOp snapshots, updates copy on write),
    which tensorweave does not have."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert [int(sess.run([train, step])[1]) for _ in range(3)] == [1, 2, 3]
