"""Graphs built under `replica_device_setter`, shared by `make_device_setter_expected.py` (run
with TensorFlow) and `test_replica_device_setter.py` (run with tensorweave).

A builder takes `(tf, rds)` (`rds`: `replica_device_setter`) and builds its ops in the default
graph; `placements(graph)` maps every op name to `[op type, device, colocation groups]`. The
expected maps live in tests/data/replica_device_setter_expected.json under the case's name.
Nothing here imports TensorFlow or tensorweave.
"""

from __future__ import annotations


def _dense_adam(tf):
    gs = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    h = tf.layers.dense(x, 4, activation=tf.nn.relu)
    out = tf.layers.dense(h, 1)
    loss = tf.reduce_mean(tf.square(out - y))
    return tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)


def dense_adam_ps2(tf, rds):
    """The issue's model: two dense layers trained by Adam, two ps tasks."""
    with tf.device(rds(ps_tasks=2)):
        _dense_adam(tf)


def dense_adam_ps3_after(tf, rds):
    """Three ps tasks and a variable made after the optimizer: its task shows how many ps ops
    (slots and beta powers, built under colocate_with) advanced the round robin."""
    with tf.device(rds(ps_tasks=3)):
        _dense_adam(tf)
        tf.Variable(1.0, name="after")


def nested_scopes(tf, rds):
    """Devices set by inner scopes merge field by field; a cluster gives the ps task count."""
    cluster = {"ps": ["ps0:2222", "ps1:2222", "ps2:2222"], "worker": ["w0:2222", "w1:2222"]}
    with tf.device(rds(cluster=cluster, worker_device="/job:worker/task:1")):
        tf.Variable(1.0, name="v0")
        with tf.device("/cpu:0"):
            tf.Variable(2.0, name="v_cpu")
            tf.constant(1.0, name="c_cpu")
        with tf.device("/job:ps/task:2"):
            tf.Variable(3.0, name="v_ps2")
        with tf.device("/job:worker"):
            tf.Variable(4.0, name="v_worker")
            tf.constant(2.0, name="c_worker")
        with tf.device("/task:0"):
            tf.constant(3.0, name="c_task0")
        tf.Variable(5.0, name="v_last")
        tf.constant(4.0, name="c_plain")


def ps_device_with_type(tf, rds):
    """A ps device naming a device type, an empty worker device."""
    with tf.device(rds(ps_tasks=2, ps_device="/job:ps/device:CPU:0", worker_device="")):
        tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        with tf.device("/device:GPU:1"):
            tf.Variable(3.0, name="c")
        tf.constant(1.0, name="k")


def no_merge(tf, rds):
    """merge_devices=False: an op with a device keeps it as it is."""
    with tf.device(rds(ps_tasks=2, merge_devices=False)):
        tf.Variable(1.0, name="a")
        with tf.device("/cpu:0"):
            tf.Variable(2.0, name="b")
            tf.constant(1.0, name="k_cpu")
        tf.Variable(3.0, name="c")


def custom_ps_ops(tf, rds):
    """ps_ops lists the op types that go to ps (here constants, not variables)."""
    with tf.device(rds(ps_tasks=2, ps_ops=["Const"])):
        tf.constant(1.0, name="k0")
        tf.constant(2.0, name="k1")
        tf.Variable(1.0, name="v")


def sync_replicas(tf, rds):
    """SyncReplicasOptimizer over GradientDescent: accumulator, token queue and step names."""
    with tf.device(rds(ps_tasks=2)):
        gs = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                             replicas_to_aggregate=2, total_num_replicas=3)
        opt.minimize(loss, global_step=gs)
        opt.get_init_tokens_op()
        opt.get_chief_queue_runner()


CASES = {f.__name__: f for f in (dense_adam_ps2, dense_adam_ps3_after, nested_scopes,
                                 ps_device_with_type, no_merge, custom_ps_ops, sync_replicas)}


def placements(graph) -> dict:
    """{op name: [op type, device, colocation groups]} for every op of `graph`."""
    return {op.name: [op.type, op.device, sorted(_text(g) for g in op.colocation_groups())]
            for op in graph.get_operations()}


def _text(group) -> str:
    return group.decode() if isinstance(group, bytes) else group
