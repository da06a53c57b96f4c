"""Inter-op parallelism: independent expensive nodes run on the device's pool."""

import numpy as np
import pytest

import tensorweave as tf


def _wide(n=4):
    x = tf.placeholder(tf.float32, [16, 16], name="x")
    ws = [tf.constant(np.random.RandomState(i).rand(16, 16).astype(np.float32))
          for i in range(n)]
    return x, ws, tf.add_n([tf.matmul(x, w) for w in ws])


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_same_results_with_any_thread_count(threads):
    x, ws, out = _wide()
    X = np.random.rand(16, 16).astype(np.float32)
    cfg = tf.ConfigProto(inter_op_parallelism_threads=threads)
    with tf.Session(config=cfg) as s:
        got = s.run(out, {x: X})
    want = sum(X @ s_.op.get_attr("value") for s_ in ws)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_wide_plans_submit_to_the_pool_and_narrow_plans_do_not():
    from concurrent.futures import ThreadPoolExecutor

    from tensorweave.runtime.executor import Executor
    from tensorweave.runtime.plan import Plan
    from tensorweave.runtime.step import StepContext

    x, ws, out = _wide(3)
    g = tf.get_default_graph()._as_ir()
    from tensorweave.master.prune import prune

    pruned = prune(g.node_map(), [n.name for n in g.nodes], ["x:0"], [out.name], []).graph
    with ThreadPoolExecutor(2) as pool:
        ex = Executor(Plan(pruned), pool)
        assert "_submit" in ex._runner._fn.__globals__
        X = np.ones((16, 16), np.float32)
        got = ex.run([X], StepContext(1))[0]
        np.testing.assert_allclose(got, sum(X @ w.op.get_attr("value") for w in ws), rtol=1e-5)
        chain = prune(g.node_map(), [n.name for n in g.nodes], ["x:0"], [ws[0].name], []).graph
        assert "_submit" not in Executor(Plan(chain), pool)._runner._fn.__globals__


def test_error_in_a_pooled_node_names_it():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    a = tf.matmul(x, tf.constant(np.ones((3, 2), np.float32)), name="ok")
    b = tf.matmul(x, tf.placeholder(tf.float32, [None, None], name="w"), name="bad")
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="node bad"):
            s.run([a, b], {x: np.ones((2, 3)), "w:0": np.ones((4, 4))})



def test_a_depth_ending_on_a_fetch_still_collects_its_pooled_nodes():
    """The fed `x` is fetched too: its _Retval sits at the matmuls' depth, last there; the
    pooled matmuls are still collected before the next depth's _Retvals read them."""
    x = tf.placeholder(tf.float32, [4, 4], name="x")
    ws = [tf.constant(np.full((4, 4), i + 1.0, np.float32)) for i in range(3)]
    prods = [tf.matmul(x, w) for w in ws]
    X = np.eye(4, dtype=np.float32)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as s:
        got = s.run(prods + [x], {x: X})
    for i, v in enumerate(got[:3]):
        np.testing.assert_array_equal(v, np.full((4, 4), i + 1.0))
    np.testing.assert_array_equal(got[3], X)
