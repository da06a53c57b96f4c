"""Writes the optimizer fixtures with real TensorFlow (TF1 graph mode, the TF peer):

  tests/data/optimizers_expected.npz — for every config of DENSE_CONFIGS, 30 steps of the
    optimizer on a small MLP (`dense/<cfg>/loss`: the loss before each step, then the final value
    of every variable, slots included, as `dense/<cfg>/<var op name>`); for SPARSE_CONFIGS,
    10 steps on an embedding-style loss whose gradient is an IndexedSlices with repeated
    indices (`sparse/<cfg>/...`).
  tests/data/optimizers_names.json — per config, the (name, type) of every op apply_gradients
    adds, the optimizer's variables and slot names, and the colocation of slots and updates.

Inputs and initial weights come from `make_data()` (numpy, fixed seed), never from TF's RNG, and
the tests import this module's configs, so both sides build the same thing. Run:

  /root/.cache/tensorweave-tf-peer/bin/python tests/training/make_expected.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"
NPZ = DATA / "optimizers_expected.npz"
NAMES = DATA / "optimizers_names.json"
DENSE_STEPS = 30
SPARSE_STEPS = 10

# config name -> (tf.train class, kwargs, learning-rate schedule or None)
DENSE_CONFIGS = {
    "gd": ("GradientDescentOptimizer", {"learning_rate": 0.1}, None),
    "gd_decay": ("GradientDescentOptimizer", {}, ("exponential_decay", {
        "learning_rate": 0.2, "decay_steps": 7, "decay_rate": 0.5, "staircase": True})),
    "momentum": ("MomentumOptimizer", {"learning_rate": 0.05, "momentum": 0.9}, None),
    "nesterov": ("MomentumOptimizer",
                 {"learning_rate": 0.05, "momentum": 0.9, "use_nesterov": True}, None),
    "adam": ("AdamOptimizer", {"learning_rate": 0.01}, None),
    "rmsprop": ("RMSPropOptimizer", {"learning_rate": 0.01}, None),
    "rmsprop_centered": ("RMSPropOptimizer",
                         {"learning_rate": 0.01, "momentum": 0.5, "centered": True}, None),
    "adagrad": ("AdagradOptimizer", {"learning_rate": 0.1}, None),
    "adadelta": ("AdadeltaOptimizer", {"learning_rate": 1.0}, None),
}
SPARSE_CONFIGS = {
    "gd": ("GradientDescentOptimizer", {"learning_rate": 0.1}, None),
    "momentum": ("MomentumOptimizer", {"learning_rate": 0.05, "momentum": 0.9}, None),
    "nesterov": ("MomentumOptimizer",
                 {"learning_rate": 0.05, "momentum": 0.9, "use_nesterov": True}, None),
    "adam": ("AdamOptimizer", {"learning_rate": 0.05}, None),
    "rmsprop": ("RMSPropOptimizer", {"learning_rate": 0.01, "momentum": 0.5}, None),
    "rmsprop_centered": ("RMSPropOptimizer", {"learning_rate": 0.01, "centered": True}, None),
    "adagrad": ("AdagradOptimizer", {"learning_rate": 0.1}, None),
    "adadelta": ("AdadeltaOptimizer", {"learning_rate": 1.0}, None),
}
SPARSE_IDS = [1, 3, 1, 7, 3]


def make_data() -> dict[str, np.ndarray]:
    """The inputs and initial weights of both models (float32)."""
    rng = np.random.RandomState(1234)

    def f(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {"x": f(16, 5), "y": f(16, 3), "w1": f(5, 8, scale=0.5), "b1": f(8, scale=0.1),
            "w2": f(8, 3, scale=0.5), "b2": f(3, scale=0.1), "params": f(10, 4, scale=0.5),
            "ew": f(4), "target": f(len(SPARSE_IDS), 4)}


def build_dense(tf, data):
    """The MLP loss: mean((tanh(x w1 + b1) w2 + b2 - y)²), variables under layer1/ layer2/."""
    with tf.variable_scope("layer1"):
        w1 = tf.get_variable("kernel", initializer=data["w1"])
        b1 = tf.get_variable("bias", initializer=data["b1"])
    with tf.variable_scope("layer2"):
        w2 = tf.get_variable("kernel", initializer=data["w2"])
        b2 = tf.get_variable("bias", initializer=data["b2"])
    h = tf.tanh(tf.matmul(tf.constant(data["x"]), w1) + b1)
    out = tf.matmul(h, w2) + b2
    return tf.reduce_mean(tf.square(out - tf.constant(data["y"])))


def build_sparse(tf, data):
    """sum((gather(params, ids) * ew - target)²): the gradient of params is IndexedSlices."""
    with tf.variable_scope("emb"):
        params = tf.get_variable("params", initializer=data["params"])
    rows = tf.gather(params, tf.constant(SPARSE_IDS, dtype=tf.int32))
    return tf.reduce_sum(tf.square(rows * tf.constant(data["ew"]) - tf.constant(data["target"])))


def make_optimizer(train, config, global_step):
    """The optimizer of `config` from namespace `train` (tf.train)."""
    cls, kwargs, schedule = config
    kwargs = dict(kwargs)
    if schedule is not None:
        fn_name, sched_kwargs = schedule
        kwargs["learning_rate"] = getattr(train, fn_name)(global_step=global_step,
                                                          **sched_kwargs)
    return getattr(train, cls)(**kwargs)


def _run(tf, build, config, steps, data) -> dict[str, np.ndarray]:
    out = {}
    graph = tf.Graph()
    with graph.as_default():
        loss = build(tf, data)
        global_step = tf.train.get_or_create_global_step()
        opt = make_optimizer(tf.train, config, global_step)
        train_op = opt.minimize(loss, global_step=global_step)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(steps):
                losses.append(sess.run(loss))
                sess.run(train_op)
            out["loss"] = np.array(losses, np.float32)
            for v in tf.global_variables():
                out[v.op.name] = sess.run(v)
    return out


def _names(tf, config) -> dict:
    graph = tf.Graph()
    with graph.as_default():
        with tf.variable_scope("dense"):
            k = tf.get_variable("kernel", [2, 3])
            b = tf.get_variable("bias", [3], initializer=tf.zeros_initializer())
        gs = tf.train.get_or_create_global_step()
        grads = [tf.constant(np.ones((2, 3), np.float32)), tf.constant(np.ones(3, np.float32))]
        first = len(graph.get_operations())
        opt = make_optimizer(tf.train, config, gs)
        train_op = opt.apply_gradients(list(zip(grads, [k, b])), global_step=gs)
        ops = graph.get_operations()[first:]
        return {
            "ops": sorted([op.name, op.type] for op in ops),
            "train_op": train_op.name,
            "variables": [v.name for v in opt.variables()],
            "slot_names": opt.get_slot_names(),
            "colocation": sorted([op.name, [g.decode() for g in op.colocation_groups()]]
                                 for op in ops if op.type == "VariableV2"
                                 or op.type.startswith("Apply")),
        }


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    data = make_data()
    arrays = {f"data/{k}": v for k, v in data.items()}
    for name, config in DENSE_CONFIGS.items():
        for k, v in _run(tf, build_dense, config, DENSE_STEPS, data).items():
            arrays[f"dense/{name}/{k}"] = v
    for name, config in SPARSE_CONFIGS.items():
        for k, v in _run(tf, build_sparse, config, SPARSE_STEPS, data).items():
            arrays[f"sparse/{name}/{k}"] = v
    np.savez_compressed(NPZ, **arrays)
    names = {name: _names(tf, config) for name, config in DENSE_CONFIGS.items()}
    NAMES.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    print(f"wrote {NPZ} ({len(arrays)} arrays) and {NAMES}")


if __name__ == "__main__":
    main()
