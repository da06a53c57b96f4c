"""`tf.test.TestCase` and helpers: sessions, evaluate, TF's assertion messages; a TF1 test
module runs under pytest and under `tf.test.main()`."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf


class CaseTest(tf.test.TestCase):
    def test_fresh_graph_and_seed_per_test(self):
        self.assertEqual(tf.get_default_graph().get_operations(), [])
        self.assertEqual(tf.get_default_graph().seed, 87654321)

    def test_sessions(self):
        x = tf.constant([1.0, 2.0])
        with self.cached_session() as a:
            self.assertIs(tf.get_default_session(), a)
            self.assertAllClose(x.eval(), [1.0, 2.0])
        with self.cached_session() as b, self.test_session() as c:
            self.assertIs(a, b)
            self.assertIs(a, c)
        with self.session() as d:
            self.assertIsNot(a, d)
        self.assertTrue(d._closed)  # noqa: SLF001

    def test_evaluate_and_structures(self):
        v = tf.Variable([1, 2])
        self.evaluate(tf.global_variables_initializer())
        self.assertAllEqual(self.evaluate(v), [1, 2])
        self.assertAllClose({"a": [1.0, (2.0, 3.0)], "b": np.ones(2)},
                            {"a": [1.0, (2.0, 3.0000001)], "b": tf.ones([2])})
        self.assertAllEqual(np.array([b"ab"]), ["ab"])
        self.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))

    def test_assertion_messages(self):
        with self.assertRaisesRegex(AssertionError, "not close where = .*\n.*not close lhs"):
            self.assertAllClose([1.0, 2.0], [1.0, 2.5])
        with self.assertRaisesRegex(AssertionError, "Shape mismatch: expected \\(2,\\), got"):
            self.assertAllEqual([1, 2], [1, 2, 3])
        with self.assertRaisesRegex(TypeError, "tf_tensor must be a Tensor"):
            self.assertShapeEqual(np.zeros(2), np.zeros(2))
        self.assertNotAllClose([1.0], [2.0])
        self.assertAllInRange([1, 2], 1, 2)
        self.assertAllGreater([3, 4], 2)
        with self.assertRaises(AssertionError):
            self.assertAllInRange([1, 3], 1, 2)

    def test_raises_op_error(self):
        v = tf.Variable(1.0)
        with self.cached_session():
            with self.assertRaisesOpError("uninitialized"):
                v.eval()
            with self.assertRaisesRegex(AssertionError, "OpError not raised"):
                with self.assertRaisesOpError("x"):
                    pass

    def test_temp_dir_and_gradient(self):
        self.assertTrue(self.get_temp_dir().startswith(tf.test.get_temp_dir()))
        x = tf.constant([1.0, 2.0], dtype=tf.float64)
        with self.session():
            self.assertLess(tf.test.compute_gradient_error(x, [2], x * x, [2]), 1e-6)

    def test_device_queries(self):
        self.assertFalse(tf.test.is_gpu_available())
        self.assertEqual(tf.test.gpu_device_name(), "")

    def test_graph_def_equality(self):
        tf.constant(1.0, name="a")
        g = tf.get_default_graph().as_graph_def()
        tf.test.assert_equal_graph_def(g, g)
        tf.constant(2.0, name="b")
        with self.assertRaisesRegex(AssertionError, "only in actual \\['b'\\]"):
            tf.test.assert_equal_graph_def(tf.get_default_graph().as_graph_def(), g)


@pytest.mark.slow
def test_tf_test_main_runs_a_module(tmp_path):
    path = tmp_path / "prog_test.py"
    path.write_text(textwrap.dedent('''
        import sys, tensorweave
        sys.modules["tensorflow"] = tensorweave
        import tensorflow as tf

        class T(tf.test.TestCase):
            def testPass(self):
                with self.test_session():
                    self.assertAllEqual(tf.constant([1]).eval(), [1])

            def testFail(self):
                self.assertAllClose(1.0, 2.0)

        if __name__ == "__main__":
            tf.test.main()
    '''))
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "Ran 3 tests" in r.stderr  # testPass, testFail and TestCase.test_session, as in TF
    assert "FAILED (failures=1)" in r.stderr


@pytest.mark.multiprocess
def test_create_local_cluster():
    workers, ps = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(2.0)
    with tf.Session(workers[0].target) as sess:
        sess.run(v.initializer)
        sess.run(v.assign_add(1.0))
    with tf.Session(workers[1].target) as sess:
        assert sess.run(v) == 3.0
    for server in workers + ps:
        server.stop()
