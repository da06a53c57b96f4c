"""Steps across several CPU devices: placement, partitions with _Send/_Recv, abort."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.apply import apply_op


def _cfg(n):
    return tf.ConfigProto(device_count={"CPU": n})


@pytest.mark.parametrize("n", [1, 2, 4])
def test_chain_across_devices_gives_same_result(n):
    x = tf.placeholder(tf.float32, [3], name="x")
    y = x
    for i in range(8):
        with tf.device(f"/cpu:{i % n}"):
            y = tf.sin(y)
    with tf.Session(config=_cfg(n)) as s:
        meta = tf.RunMetadata()
        got = s.run(y, {x: np.arange(3, dtype=np.float32)},
                    options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    want = np.arange(3, dtype=np.float32)
    for _ in range(8):
        want = np.sin(want)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(meta.partition_graphs) == n
    sends = [nd for g in meta.partition_graphs for nd in g.node if nd.op == "_Send"]
    recvs = [nd for g in meta.partition_graphs for nd in g.node if nd.op == "_Recv"]
    assert len(sends) == len(recvs) == (0 if n == 1 else 8)


def test_one_recv_per_tensor_and_device():
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        a, b = tf.sin(x), tf.sin(x)
        c = a + b
    with tf.Session(config=_cfg(2)) as s:
        meta = tf.RunMetadata()
        out = s.run(c, {x: 1.0}, options=tf.RunOptions(output_partition_graphs=True),
                    run_metadata=meta)
    assert out == pytest.approx(2 * np.sin(1.0))
    recvs = [(nd.device, nd.attr["tensor_name"].s) for g in meta.partition_graphs
             for nd in g.node if nd.op == "_Recv"]
    # x goes to cpu:1 once; the result comes back to the client device once
    assert len(recvs) == 2 and len(set(recvs)) == 2
    keys = [nd.attr["tensor_name"].s.decode() for g in meta.partition_graphs for nd in g.node
            if nd.op == "_Send"]
    assert all(k.startswith("edge_") for k in keys)


def test_control_edge_across_devices():
    with tf.device("/cpu:1"):
        a = tf.constant(1.0, name="a")
    with tf.device("/cpu:0"), tf.control_dependencies([a]):
        b = tf.constant(2.0, name="b")
    with tf.Session(config=_cfg(2)) as s:
        assert s.run(b) == 2.0


def test_unknown_device_lists_available_and_soft_placement():
    with tf.device("/cpu:7"):
        y = tf.sin(tf.constant(1.0))
    with tf.Session(config=_cfg(2)) as s, pytest.raises(tf.errors.InvalidArgumentError) as e:
        s.run(y)
    assert "device:CPU:0" in str(e.value) and "device:CPU:1" in str(e.value)
    soft = tf.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    with tf.Session(config=soft) as s:
        assert s.run(y) == pytest.approx(np.sin(1.0))


def test_error_on_one_device_aborts_the_step():
    tf.register_op("TestMDFail", inputs=["x: float"], outputs=["y: float"])

    @tf.register_kernel("TestMDFail")
    def _fail(node):
        def run(x):
            raise tf.errors.InvalidArgumentError(None, None, "boom on cpu:1")
        return run

    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = apply_op("TestMDFail", x, name="fails")
    z = tf.sin(y)
    with tf.Session(config=_cfg(2)) as s, pytest.raises(tf.errors.InvalidArgumentError,
                                                         match="boom on cpu:1"):
        s.run(z, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=5000))


def test_list_devices_counts():
    with tf.Session(config=_cfg(4)) as s:
        names = [d.name for d in s.list_devices()]
    assert names == [f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(4)]


def test_step_stats_per_device():
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.device("/cpu:1"):
        y = tf.sin(x, name="on1")
    meta = tf.RunMetadata()
    with tf.Session(config=_cfg(2)) as s:
        s.run(y, {x: 1.0}, options=tf.RunOptions(trace_level=3), run_metadata=meta)
    devs = {d.device: [n.node_name for n in d.node_stats] for d in meta.step_stats.dev_stats}
    assert "on1" in devs["/job:localhost/replica:0/task:0/device:CPU:1"]


def test_rendezvous_contract():
    from tensorweave.runtime.rendezvous import Rendezvous, make_key, parse_key

    key = make_key("/job:a/replica:0/task:0/device:CPU:0", 1,
                   "/job:a/replica:0/task:0/device:CPU:1", "edge_1_x")
    assert key.endswith(";0000000000000001;/job:a/replica:0/task:0/device:CPU:1;edge_1_x;0:0")
    assert parse_key(key)[3] == "edge_1_x"
    r = Rendezvous(2)
    r.send(key, 5)
    assert r.recv(key) == (5, False)
    import time

    with pytest.raises(tf.errors.DeadlineExceededError, match="edge_1_x"):
        r.recv(key, time.monotonic() + 0.05)
    r.done()  # the other participant finished: nothing can come any more
    with pytest.raises(tf.errors.InternalError, match="never arrive"):
        r.recv(key)
    r.abort(tf.errors.AbortedError(None, None, "stop"))
    with pytest.raises(tf.errors.AbortedError):
        r.recv(key)


def _read_after_update(update):
    """`identity(v.read_value())` on cpu:0 under a control dependency on `update(v)`, with
    the variable on cpu:1 (TF 2.21 gives 1, 2, 3 for both updates below)."""
    with tf.device("/cpu:1"):
        v = tf.Variable(0, name="v")
        inc = update(v)
    with tf.device("/cpu:0"), tf.control_dependencies([inc]):
        r = tf.identity(v.read_value())
    return v, r


def test_a_ref_read_across_devices_waits_for_the_consumers_other_inputs():
    v, r = _read_after_update(lambda v: tf.assign_add(v, 1))
    with tf.Session(config=_cfg(2)) as s:
        s.run(v.initializer)
        meta = tf.RunMetadata()
        got = [int(s.run(r, options=tf.RunOptions(output_partition_graphs=True),
                         run_metadata=meta)) for _ in range(3)]
    assert got == [1, 2, 3]
    nodes = {nd.name: nd for g in meta.partition_graphs for nd in g.node}
    read = nodes["read"]
    ref_recv = nodes[read.input[0]]
    ctl_recv = [i[1:] for i in read.input if i.startswith("^")]
    # as TF's partition: the recv of v depends on the recv of ^AssignAdd (the _Send does not)
    assert ref_recv.op == "_Recv" and [i[1:] for i in ref_recv.input] == ctl_recv
    assert not [i for i in nodes[f"v/_send_{ref_recv.name.rsplit('_', 1)[1]}"].input
                if i.startswith("^")]


@pytest.mark.parametrize("update", [lambda v: tf.assign_add(v, 1),
                                    lambda v: tf.assign(v, v + 1)], ids=["assign_add", "assign"])
def test_a_ref_read_across_devices_sees_the_update_it_depends_on(update):
    v, r = _read_after_update(update)
    with tf.Session(config=_cfg(2)) as s:
        s.run(v.initializer)
        assert [int(s.run(r)) for _ in range(3)] == [1, 2, 3]


def test_ref_recvs_are_not_shared_so_their_controls_make_no_cycle():
    """Two readers of v on cpu:0: one plain, one after an op that needs the plain one. A
    shared recv would wait for that op, which waits for the recv: each gets its own."""
    with tf.device("/cpu:1"):
        v = tf.Variable(1.0, name="v")
    with tf.device("/cpu:0"):
        a = tf.identity(v) * 2.0
        with tf.control_dependencies([a]):
            b = tf.identity(v) + 1.0
    with tf.Session(config=_cfg(2)) as s:
        s.run(v.initializer)
        assert s.run([a, b]) == [2.0, 2.0]


def test_ref_read_controls_beside_a_while_loop_and_a_queue():
    with tf.device("/cpu:1"):
        v = tf.Variable(0.0, name="v")
        inc = tf.assign_add(v, 1.0)
    with tf.device("/cpu:0"):
        q = tf.FIFOQueue(4, tf.float32)
        with tf.control_dependencies([inc]):
            enq = q.enqueue(tf.identity(v))
        _, total = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + v),
                                 [tf.constant(0), tf.constant(0.0)])
    with tf.Session(config=_cfg(2)) as s:
        s.run(v.initializer)
        s.run(enq)
        s.run(enq)
        assert s.run([q.dequeue(), q.dequeue()]) == [1.0, 2.0]
        assert s.run(total) == 6.0
