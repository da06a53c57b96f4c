"""Each optimization pass: structure after the pass alone, and equal outputs with it off."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import ir
from tensorweave.master.passes import PassContext, optimize, pass_names
from tensorweave.master.prune import prune
from tensorweave.ops.apply import apply_op


def _pruned(fetches, feeds=()):
    g = tf.get_default_graph()._as_ir()
    nodes = {n.name: n for n in g.nodes}
    names = [t.name for t in fetches]
    p = prune(nodes, [n.name for n in g.nodes], [t.name for t in feeds], names, [])
    return ir.GraphDef(nodes=p.graph.nodes, shapes=g.shapes)


def _run_pass(name, fetches, feeds=()):
    """Runs one pass (then `dependency`, which drops the nodes it left unused)."""
    ctx = PassContext()
    only = [name] if name == "dependency" else [name, "dependency"]
    out = optimize(_pruned(fetches, feeds), ctx, only=only)
    return [n.op for n in out.nodes], ctx.report


def _same_with_and_without(fetches, feed_dict, passes):
    off = tf.ConfigProto()
    off.graph_options.rewrite_options.optimizers.extend(["dependency"])
    results = []
    for cfg in (None, {"disabled_passes": passes}):
        with tf.Session(config=cfg) as s:
            results.append(s.run(fetches, feed_dict))
    # NOTE: a rewrite reorders float32 arithmetic (folding batch norm into a conv's weights
    # rounds the scaled weights first): each output may differ by a few ulps of the largest
    # partial sum it adds up (|terms| ~10 here, eps 6e-8), not of the (possibly tiny) result.
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _stateful(name):
    """A stateful op (the dependency pass turns stateless ones nobody reads into NoOps)."""
    return apply_op("RandomUniform", tf.constant([1], tf.int32), dtype=tf.float32, name=name)[0]


def test_pass_table_is_ordered_and_named():
    assert pass_names() == ["constant_folding", "arithmetic", "cse", "dependency",
                            "mark_for_compilation", "remapper"]


def test_constant_folding_structure_and_equivalence():
    x = tf.placeholder(tf.float32, [2], name="x")
    c = tf.sin(tf.constant([1.0, 2.0])) + tf.constant(3.0)
    y = x * c
    ops, report = _run_pass("constant_folding", [y], [x])
    assert "Sin" not in ops and "AddV2" not in ops and "Mul" in ops
    assert any("folded" in r for _, r in report)
    _same_with_and_without([y], {x: [1.0, -1.0]}, ["constant_folding"])


def test_constant_folding_of_static_shape():
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    s = tf.shape(x)
    ops, _ = _run_pass("constant_folding", [s], [x])
    assert ops.count("Const") == 1 and "Shape" not in ops


def test_constant_folding_never_folds_stateful_or_random():
    r = tf.random_uniform([2], seed=1)
    ops, _ = _run_pass("constant_folding", [r])
    assert "RandomUniform" in ops


def test_cse_merges_duplicates():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.sin(x) + tf.sin(x)
    ops, _ = _run_pass("cse", [y], [x])
    assert ops.count("Sin") == 1
    _same_with_and_without([y], {x: [0.3, 0.7]}, ["cse"])


def test_cse_keeps_stateful_ops():
    a = tf.random_uniform([2], seed=1)
    b = tf.random_uniform([2], seed=1)
    ops, _ = _run_pass("cse", [a + b])
    assert ops.count("RandomUniform") == 2


@pytest.mark.parametrize("build", [
    lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x + 0.0, lambda x: x - 0.0,
    lambda x: x / 1.0, lambda x: tf.negative(tf.negative(x)),
])
def test_arithmetic_identities(build):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.sin(build(x))
    ops, _ = _run_pass("arithmetic", [y], [x])
    assert not {"Mul", "AddV2", "Sub", "RealDiv", "Neg"} & set(ops)
    _same_with_and_without([y], {x: [0.5, -2.0]}, ["arithmetic"])


def test_arithmetic_transposes_and_constant_chains():
    x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
    t = tf.transpose(tf.transpose(x, [1, 2, 0]), [2, 0, 1])
    ops, _ = _run_pass("arithmetic", [t], [x])
    assert "Transpose" not in ops
    y = (x + 1.0) + 2.0
    ops, _ = _run_pass("arithmetic", [y], [x])
    assert ops.count("AddV2") == 1
    _same_with_and_without([t, y], {x: np.random.rand(2, 3, 4)}, ["arithmetic"])


def test_dependency_removes_identity_and_noop_keeping_control():
    x = tf.placeholder(tf.float32, [], name="x")
    a = _stateful("a")                 # its value is never read, but it is stateful: it stays
    with tf.control_dependencies([a]):
        n = tf.no_op(name="n")
    with tf.control_dependencies([n]):
        y = tf.identity(tf.identity(x) * 2.0, name="y")
    ops, _ = _run_pass("dependency", [y], [x])
    assert "NoOp" not in ops and ops.count("Identity") == 0
    out = optimize(_pruned([y], [x]), PassContext(), only=["dependency"])
    mul = next(n for n in out.nodes if n.op == "Mul")
    assert "^a" in mul.inputs or any("^a" in n.inputs for n in out.nodes)


def test_dependency_makes_values_nobody_reads_noops():
    x = tf.placeholder(tf.float32, [], name="x")
    a = tf.sin(x, name="a")
    with tf.control_dependencies([a]):
        y = tf.multiply(x, 2.0, name="y")
    ops, report = _run_pass("dependency", [y], [x])
    assert "Sin" not in ops and "NoOp" not in ops
    assert any("a: value never read" in text for _, text in report)
    out = optimize(_pruned([y], [x]), PassContext(), only=["dependency"])
    mul = next(n for n in out.nodes if n.op == "Mul")
    assert not [i for i in mul.inputs if i.startswith("^")]   # x is read: no extra control


def test_dependency_keeps_ops_that_change_a_ref_input():
    """CountUpTo is not marked stateful (as in TF) but increments its variable: it stays."""
    x = tf.placeholder(tf.float32, [], name="x")
    counter = tf.Variable(0, name="counter")
    with tf.control_dependencies([counter.count_up_to(5)]):
        y = tf.identity(x, name="y")
    ops, _ = _run_pass("dependency", [y], [x])
    assert "CountUpTo" in ops
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(3):
            s.run(y, {x: 1.0})
        assert s.run(counter) == 3


def test_dependency_skips_the_input_gradient_tf_gates_but_nobody_reads():
    """tf.gradients gates a conv's two input gradients with a control tuple; the input's is
    never read when the input is a placeholder, so the pass leaves it out, as Grappler does."""
    x = tf.placeholder(tf.float32, [2, 5, 5, 1], name="x")
    w = tf.Variable(np.random.RandomState(0).randn(3, 3, 1, 2).astype(np.float32))
    loss = tf.reduce_sum(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME") ** 2)
    grad = tf.gradients(loss, [w], gate_gradients=True)[0]
    ops, _ = _run_pass("dependency", [grad], [x])
    assert "Conv2DBackpropFilter" in ops and "Conv2DBackpropInput" not in ops
    feed = {x: np.random.RandomState(1).randn(2, 5, 5, 1)}
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        on = s.run(grad, feed)
    with tf.Session(config={"disabled_passes": ["dependency"]}) as s:
        s.run(tf.global_variables_initializer())
        np.testing.assert_allclose(s.run(grad, feed), on, rtol=1e-6)


def test_remapper_fuses_matmul_bias_relu():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.random.rand(3, 4).astype(np.float32))
    b = tf.constant(np.random.rand(4).astype(np.float32))
    y = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))
    ops, _ = _run_pass("remapper", [y], [x])
    assert "_FusedMatMul" in ops and not {"MatMul", "BiasAdd", "Relu"} & set(ops)
    _same_with_and_without([y], {x: np.random.randn(5, 3)}, ["remapper"])


def test_remapper_fuses_max_pool_grad_with_the_relu_grad_after_it():
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    h = tf.nn.relu(x * 2.0)
    loss = tf.reduce_sum(tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") ** 2)
    dx = tf.gradients(loss, x)[0]
    ops, report = _run_pass("remapper", [dx], [x])
    assert "_TwFusedMaxPoolGradReluGrad" in ops and not {"MaxPoolGrad", "ReluGrad"} & set(ops)
    _same_with_and_without([dx], {x: np.random.randn(2, 6, 6, 3)}, ["remapper"])


def test_remapper_fuses_conv_bias_relu_and_folds_batch_norm():
    x = tf.placeholder(tf.float32, [None, 6, 5, 2], name="x")
    w = tf.constant(np.random.randn(3, 3, 2, 4).astype(np.float32))
    b = tf.constant(np.random.randn(4).astype(np.float32))
    y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    ops, _ = _run_pass("remapper", [y], [x])
    assert "_FusedConv2D" in ops and "Conv2D" not in ops
    stats = [tf.constant(np.random.rand(4).astype(np.float32) + 0.5) for _ in range(4)]
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "VALID")
    bn = apply_op("FusedBatchNormV3", conv, *stats, is_training=False, epsilon=0.001)[0]
    ops, _ = _run_pass("remapper", [bn], [x])
    assert "FusedBatchNormV3" not in ops and "_FusedConv2D" in ops
    _same_with_and_without([y, bn], {x: np.random.randn(2, 6, 5, 2)}, ["remapper"])


def test_remapper_fuses_elementwise_chain():
    x = tf.placeholder(tf.float32, [50], name="x")
    y = tf.tanh(tf.cos(tf.sin(x)))
    ops, _ = _run_pass("remapper", [y], [x])
    assert ops.count("_TwFusedElementwise") == 1 and "Sin" not in ops
    _same_with_and_without([y], {x: np.linspace(-3, 3, 50)}, ["remapper"])


def test_passes_switch_off_by_tf_toggle():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.sin(x) + tf.sin(x)
    cfg = tf.ConfigProto()
    cfg.graph_options.rewrite_options.common_subgraph_elimination = 2  # OFF
    cfg.graph_options.rewrite_options.remapping = 2
    meta = tf.RunMetadata()
    with tf.Session(config=cfg) as s:
        s.run(y, {x: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True),
              run_metadata=meta)
    assert [n.op for g in meta.partition_graphs for n in g.node].count("Sin") == 2
    with pytest.raises(ValueError, match="Unknown optimization pass"):
        optimize(_pruned([y], [x]), PassContext(), only=["nope"])


def test_arithmetic_keeps_control_inputs_of_dropped_constants():
    x = tf.placeholder(tf.float32, [2], name="x")
    a = _stateful("a")
    with tf.control_dependencies([a]):
        z = x * 1.0  # the constant carries ^a; the Mul is dominated by it
    ops, _ = _run_pass("arithmetic", [z], [x])
    assert "Mul" not in ops and "RandomUniform" in ops  # `a` still runs before z


def test_cond_across_devices_carries_deadness():
    cfg = tf.ConfigProto(device_count={"CPU": 2})
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [], name="x")

    def taken():
        with tf.device("/cpu:1"):
            return tf.sin(x)

    y = tf.cond(p, taken, lambda: tf.cos(x))
    with tf.Session(config=cfg) as s:
        assert s.run(y, {p: True, x: 1.0}) == pytest.approx(np.sin(1.0))
        assert s.run(y, {p: False, x: 1.0}) == pytest.approx(np.cos(1.0))
