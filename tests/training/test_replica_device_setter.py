"""`tf.train.replica_device_setter`: device names, merging and strategies, against TensorFlow.

The expected placements come from `make_device_setter_expected.py` (run with TensorFlow) for
the graphs of `device_setter_cases.py`: op name → [type, device, colocation groups].
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.training import device_setter
from tensorweave.training.device_setter import (
    GreedyLoadBalancingStrategy,
    byte_size_load_fn,
    replica_device_setter,
)
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer
from tests.training import device_setter_cases as cases

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data"
                       / "replica_device_setter_expected.json").read_text())

# NOTE: ops whose device depends on the ORDER in which `tf.device` scopes apply: TF applies
# them innermost first (a device function sees the device inner scopes set) and calls device
# functions under `colocate_with` too (advancing the round robin), as framework/scopes.py does.
SCOPE_ORDER = {
    "dense_adam_ps3_after": {"after", "after/Assign", "after/read"},
    "nested_scopes": {"v_worker", "v_worker/Assign", "v_worker/read", "v_last",
                      "v_last/Assign", "v_last/read"},
    "no_merge": {"b", "b/Assign", "b/read", "b/initial_value", "k_cpu", "c", "c/Assign",
                 "c/read"},
}


def _tf_namespace():
    """`tf` with the names this module provides (until the lead exports them)."""
    ns = type("ns", (), {})()
    for k in dir(tf):
        if not k.startswith("__"):
            setattr(ns, k, getattr(tf, k))
    train = type("train", (), {})()
    for k in dir(tf.train):
        if not k.startswith("__"):
            setattr(train, k, getattr(tf.train, k))
    train.replica_device_setter = replica_device_setter
    train.SyncReplicasOptimizer = SyncReplicasOptimizer
    ns.train = train
    return ns


def _build(name: str) -> dict:
    g = tf.Graph()
    with g.as_default():
        cases.CASES[name](_tf_namespace(), replica_device_setter)
    return cases.placements(g)


def _owned_elsewhere(name: str) -> bool:
    """Ops whose names or devices other modules decide (differences reported to the lead):
    gradient op names (autodiff), a variable's `Initializer/` ops (checked by the xfail test
    below), report_uninitialized_variables internals, the token queue's `device:CPU:*` (TF 2's
    FIFOQueue adds it)."""
    return (name.startswith(("gradients/", "report_uninitialized_variables/"))
            or name == "sync_token_q" or "/Initializer/" in name)


def _compared(case: str, found: dict, skip: set) -> tuple[dict, dict]:
    want = EXPECTED[case]
    keep = [n for n in want if not _owned_elsewhere(n) and n not in skip]
    extra = sorted(n for n in found if n not in want and not _owned_elsewhere(n))
    assert not extra, f"ops TensorFlow does not build: {extra}"
    return {n: want[n] for n in keep}, {n: found.get(n) for n in keep}


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_placements_match_tensorflow(case):
    want, got = _compared(case, _build(case), SCOPE_ORDER.get(case, set()))
    bad = {n: (want[n], got[n]) for n in want if want[n] != got[n]}
    assert not bad, f"(TensorFlow, ours) differ: {bad}"


@pytest.mark.parametrize("case", sorted(SCOPE_ORDER))
def test_device_function_order_matches_tensorflow(case):
    found = _build(case)
    want = EXPECTED[case]
    assert {n: found[n] for n in SCOPE_ORDER[case]} == {n: want[n] for n in SCOPE_ORDER[case]}


def test_variable_initializers_colocate_with_their_variable():
    found, want = _build("dense_adam_ps2"), EXPECTED["dense_adam_ps2"]
    names = [n for n in want if "/Initializer/" in n]
    assert names and {n: found.get(n) for n in names} == {n: want[n] for n in names}


def test_round_robin_over_ps_tasks_and_rest_on_worker():
    with tf.Graph().as_default():
        with tf.device(replica_device_setter(ps_tasks=3)):
            vs = [tf.Variable(float(i), name=f"v{i}") for i in range(5)]
            y = vs[0] + vs[1]
    assert [v.op.device for v in vs] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2",
                                         "/job:ps/task:0", "/job:ps/task:1"]
    assert y.op.device == "/job:worker"


def test_no_ps_tasks_gives_no_device_function():
    assert replica_device_setter() is None
    assert replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    assert replica_device_setter(cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:1"]}),
                                 ps_device="/job:other") is None


def test_cluster_spec_sets_the_task_count():
    fn = replica_device_setter(cluster=tf.train.ClusterSpec({"ps": ["a:1", "b:1"],
                                                             "worker": ["c:1"]}))
    with tf.Graph().as_default(), tf.device(fn):
        devices = [tf.Variable(1.0).op.device for _ in range(3)]
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_ps_strategy_must_be_callable():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_device_function_takes_a_node_def():
    from tensorweave import ir

    fn = replica_device_setter(ps_tasks=2)
    assert fn(ir.NodeDef(name="v", op="VariableV2", device="")) == "/job:ps/task:0"
    assert fn(ir.NodeDef(name="c", op="Const", device="/cpu:0")) == "/job:worker/device:CPU:0"


def test_greedy_load_balancing_puts_each_variable_on_the_lightest_task():
    with tf.Graph().as_default():
        strategy = GreedyLoadBalancingStrategy(2, byte_size_load_fn)
        with tf.device(replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
            big = tf.Variable(np.zeros([100], np.float32))       # 400 bytes → task 0
            small = tf.Variable(np.zeros([10], np.float64))      # 80 → task 1
            mid = tf.Variable(np.zeros([50], np.float32))        # 200 → task 1 (80 < 400)
            last = tf.Variable(np.zeros([40], np.int32))         # 160 → task 1 (280 < 400)
            after = tf.Variable(np.zeros([1], np.float32))       # task 0 (400 < 440)
    assert [v.op.device[-1] for v in (big, small, mid, last, after)] == list("01110")


def test_byte_size_load_fn_needs_a_single_output():
    with tf.Graph().as_default():
        split = tf.split(tf.zeros([4]), 2)
        with pytest.raises(ValueError, match="must have a single output"):
            byte_size_load_fn(split[0].op)
        assert byte_size_load_fn(tf.zeros([3, 2], tf.float16).op) == 12


def test_standard_ps_ops_are_tensorflows():
    assert device_setter.STANDARD_PS_OPS[:4] == ("Variable", "VariableV2",
                                                 "AutoReloadVariable", "MutableHashTable")
    assert "VarHandleOp" in device_setter.STANDARD_PS_OPS


def test_model_trains_with_variables_on_their_own_device():
    """ps and worker as two local CPUs: the variables live on CPU:1, the math on CPU:0, and
    Adam gives the same numbers as without the device function."""
    def train(use_setter: bool) -> np.ndarray:
        g = tf.Graph()
        with g.as_default():
            tf.set_random_seed(3)
            fn = replica_device_setter(
                ps_tasks=1, ps_device="/job:localhost/replica:0/task:0/device:CPU:1",
                worker_device="/job:localhost/replica:0/task:0/device:CPU:0")
            with tf.device(fn if use_setter else None):
                x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
                out = tf.layers.dense(tf.layers.dense(x, 4, activation=tf.nn.relu), 1)
                loss = tf.reduce_mean(tf.square(out - 1.0))
                step = tf.train.AdamOptimizer(0.1).minimize(loss)
            with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
                s.run(tf.global_variables_initializer())
                for _ in range(3):
                    s.run(step)
                meta = tf.RunMetadata()
                final = s.run(loss, options=tf.RunOptions(output_partition_graphs=True),
                              run_metadata=meta)
        if use_setter:
            kernel = [nd.device for p in meta.partition_graphs for nd in p.node
                      if nd.name == "dense/kernel"]
            assert kernel and kernel[0].endswith("CPU:1")
            assert len(meta.partition_graphs) == 2
        return final

    np.testing.assert_allclose(train(True), train(False), rtol=1e-6)
