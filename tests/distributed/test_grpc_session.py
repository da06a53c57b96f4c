"""`tf.Session("grpc://...")` against a real server process on 127.0.0.1."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave.distributed.local_cluster import free_ports
from tensorweave.proto import config_pb2
from tests.distributed.servers import server_process, stop

pytestmark = pytest.mark.multiprocess


@pytest.fixture(scope="module")
def target():
    with server_process("--port", "0") as (_, tgt):
        yield tgt


def _both(fetches, feed_dict=None, target=""):
    """The fetched values from a local session and from a session on `target`."""
    out = []
    for t in ("", target):
        with tf.Session(t) as sess:
            out.append(sess.run(fetches, feed_dict))
    return out


def test_feeds_and_fetches_match_a_local_session(target):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    y = tf.matmul(x, w)
    s = tf.reduce_sum(y)
    feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3)}
    local, remote = _both({"y": y, "s": s}, feed, target)
    assert remote["y"].dtype == np.float32 and remote["y"].shape == (4, 2)
    np.testing.assert_array_equal(remote["y"], local["y"])
    assert remote["s"] == local["s"] == np.float32(local["y"].sum())
    assert type(remote["s"]) is type(local["s"])


def test_strings_ints_and_callables(target):
    a = tf.placeholder(tf.int64, [2], name="a")
    b = a * 3
    c = tf.constant(["ab", "c"])
    with tf.Session(target) as sess:
        np.testing.assert_array_equal(sess.run(b, {a: [1, 2]}), [3, 6])
        np.testing.assert_array_equal(sess.run(c), [b"ab", b"c"])
        f = sess.make_callable(b, [a])
        np.testing.assert_array_equal(f(np.array([5, 7])), [15, 21])


def test_variables_outlive_sessions_until_reset(target):
    v = tf.Variable(np.float32(3.0), name="v_persist")
    inc = tf.assign_add(v, 2.0)
    with tf.Session(target) as sess:
        sess.run(v.initializer)
        sess.run(inc)
    with tf.Session(target) as sess:  # a new session sees the server's variable
        assert sess.run(v) == np.float32(5.0)
    tf.Session.reset(target)
    with tf.Session(target) as sess, pytest.raises(errors.FailedPreconditionError):
        sess.run(v)


def _error(target, fetches, feed_dict=None) -> errors.OpError:
    with tf.Session(target) as sess, pytest.raises(errors.OpError) as info:
        sess.run(fetches, feed_dict)
    return info.value


def test_unfed_placeholder_is_the_same_error(target):
    x = tf.placeholder(tf.float32, [None, 3], name="unfed")
    y = tf.reduce_sum(x)
    local, remote = _error("", y), _error(target, y)
    assert type(remote) is errors.InvalidArgumentError
    assert remote.message == local.message and "unfed" in remote.message


def test_kernel_error_names_the_node(target):
    a = tf.placeholder(tf.float32, [None, None], name="a")
    b = tf.placeholder(tf.float32, [None, None], name="b")
    mm = tf.matmul(a, b, name="bad_matmul")
    feed = {a: np.ones((2, 3), np.float32), b: np.ones((4, 5), np.float32)}
    local, remote = _error("", mm, feed), _error(target, mm, feed)
    assert type(remote) is type(local) is errors.InvalidArgumentError
    assert "bad_matmul" in remote.message and remote.message == local.message


def test_64mb_tensors_both_ways(target):
    n = 16 * 1024 * 1024  # 64 MB of float32: far over gRPC's 4 MB default
    x = tf.placeholder(tf.float32, [n], name="big")
    y = x + 1.0
    data = np.arange(n, dtype=np.float32)
    with tf.Session(target) as sess:
        out = sess.run(y, {x: data})
    assert out.shape == (n,) and out[0] == 1.0 and out[-1] == data[-1] + 1.0


def test_traced_run_returns_step_stats(target):
    x = tf.constant([1.0, 2.0], name="c")
    y = tf.square(x, name="sq")
    opts = config_pb2.RunOptions(trace_level=config_pb2.RunOptions.FULL_TRACE,
                                 output_partition_graphs=True)
    meta = config_pb2.RunMetadata()
    with tf.Session(target) as sess:
        np.testing.assert_array_equal(sess.run(y, options=opts, run_metadata=meta), [1, 4])
    names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
    assert "sq" in names
    assert len(meta.partition_graphs) == 1


def test_list_devices(target):
    with tf.Session(target) as sess:
        devs = sess.list_devices()
    cpus = [d.name for d in devs if d.device_type == "CPU"]  # not XLA_CPU (with jax)
    assert cpus == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert devs[0].device_type == "CPU"


def test_dead_address_fails_within_the_deadline():
    port = free_ports(1)[0]
    config = config_pb2.ConfigProto(operation_timeout_in_ms=2000)
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError) as info:
        tf.Session(f"grpc://127.0.0.1:{port}", config=config)
    assert time.monotonic() - start < 5.0
    assert f"127.0.0.1:{port}" in info.value.message


def test_server_process_stops_cleanly_on_sigterm():
    with server_process("--port", "0") as (proc, target):
        with tf.Session(target) as sess:
            assert sess.run(tf.constant(7)) == 7
        assert stop(proc) == 0


# NOTE: until cli/main.py's _load_commands imports cli.server, the command is loaded here.
_CLI = ("-c", "import sys; from tensorweave.cli import server; from tensorweave.cli.main "
              "import main; sys.exit(main(sys.argv[1:]))")


def test_server_cli_command_serves_a_cluster_task():
    port = free_ports(1)[0]
    cluster = f'{{"ps": ["127.0.0.1:{port}"], "worker": ["127.0.0.1:1"]}}'
    with server_process("server", "--cluster", cluster, "--job", "ps", "--task", "0",
                        module=_CLI) as (proc, target):
        assert target == f"grpc://127.0.0.1:{port}"
        only_ps = tf.ConfigProto(device_filters=["/job:ps"])
        with tf.Session(target, config=only_ps) as sess:
            assert [d.name for d in sess.list_devices() if d.device_type == "CPU"] == [
                "/job:ps/replica:0/task:0/device:CPU:0"]
        # Without a filter the session needs the worker task too, which is down: an error
        # naming it once the deadline passes, not TF's endless "still waiting".
        t = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError, match="/job:worker/replica:0/task:0"):
            tf.Session(target, config=tf.ConfigProto(operation_timeout_in_ms=1500))
        assert time.monotonic() - t < 5
        assert stop(proc) == 0


def _launches(target, config):
    """XlaLaunch nodes in the partition graphs of a step of a transcendental chain on
    128K elements (one the cost rule compiles) in a session on `target` with `config`."""
    x = tf.placeholder(tf.float32, [131072], name="x_jit")
    h = tf.nn.relu(x - 0.5)
    y = tf.reduce_sum(tf.sigmoid(h * 2.0 + 1.0) * tf.tanh(h))
    feed = {x: np.linspace(-1, 1, 131072, dtype=np.float32)}
    meta = config_pb2.RunMetadata()
    with tf.Session(target, config=config) as sess:
        got = sess.run(y, feed, options=config_pb2.RunOptions(output_partition_graphs=True),
                       run_metadata=meta)
    with tf.Session() as sess:
        np.testing.assert_allclose(got, sess.run(y, feed), rtol=1e-4)
    return [n.name for g in meta.partition_graphs for n in g.node if n.op == "XlaLaunch"]


@pytest.mark.slow
def test_global_jit_level_reaches_the_remote_master(target):
    pytest.importorskip("jax", reason="auto-clustering needs jax (pip install tensorweave[xla])")
    on = tf.ConfigProto()
    on.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    assert _launches(target, on)
    assert not _launches(target, tf.ConfigProto())
