"""`tf.test.TestCase` (TF1's TensorFlowTestCase, graph mode): an absltest.TestCase whose
setUp gives each test a fresh default graph and fixed seeds, with sessions
(`session()`, `cached_session()`, `test_session()`), `evaluate`, and TF's array assertions.

Runs unchanged under pytest and under `tf.test.main()`.
"""

from __future__ import annotations

import contextlib
import random
import re
import tempfile
import threading

import numpy as np
from absl.testing import absltest

from tensorweave import errors
from tensorweave.client.session import Session
from tensorweave.framework.default_session import get_default_session
from tensorweave.framework.graph import get_default_graph, reset_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.ops.random_ops import set_random_seed
from tensorweave.ops.variables import Variable

DEFAULT_GRAPH_SEED = 87654321


class _CheckedThread:
    """A thread whose exception fails the test at `join()`."""

    def __init__(self, testcase, target, args=None, kwargs=None):
        self._testcase, self._target = testcase, target
        self._args, self._kwargs = args or (), kwargs or {}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._exception = None
        self._started = False

    def _run(self):
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as e:  # noqa: BLE001 - reported by join()
            self._exception = e

    def start(self):
        self._started = True
        self._thread.start()

    def join(self):
        self._thread.join()
        if self._exception is not None:
            self._testcase.fail(f"Error in checkedThread: {self._exception}")

    def is_alive(self) -> bool:
        return self._thread.is_alive()


class TestCase(absltest.TestCase):
    """Base class for TF1 unit tests (see the module docstring)."""

    def __init__(self, methodName="runTest"):  # noqa: N803 - unittest's name
        super().__init__(methodName)
        self._cached_session = None
        self._tempdir = None
        self._threads = []

    def setUp(self):
        self._clear_cached_session()
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        set_random_seed(DEFAULT_GRAPH_SEED)

    def tearDown(self):
        for thread in self._threads:
            thread.join()
        self._clear_cached_session()

    def _clear_cached_session(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    # -- temp dirs and threads ---------------------------------------------------------------
    def get_temp_dir(self) -> str:
        """A directory for this test, created on first use (and kept for the process)."""
        if not self._tempdir:
            from tensorweave.testing.helpers import get_temp_dir
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802 - TF's name
        thread = _CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread

    # -- sessions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _as_default(self, sess, use_gpu=False, force_gpu=False):
        with sess.graph.as_default(), sess.as_default():
            if force_gpu:
                with sess.graph.device("/device:GPU:0"):
                    yield sess
            elif not use_gpu:
                with sess.graph.device("/device:CPU:0"):
                    yield sess
            else:
                yield sess

    def _new_session(self, graph, config):
        return Session(graph=graph if graph is not None else get_default_graph(),
                       config=config)

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new session on `graph` (default graph), installed as default, closed after."""
        with self._new_session(graph, config) as sess, self._as_default(sess, use_gpu,
                                                                        force_gpu):
            yield sess

    def _get_cached_session(self, graph, config, strict):
        if self._cached_session is None:
            self._cached_session = self._new_session(graph, config)
            self._cached_args = (graph, config)
        elif strict and (graph is not self._cached_args[0]
                         or config is not self._cached_args[1]):
            raise ValueError("The config or graph passed to cached_session differ from the "
                             "ones of the session it caches.")
        return self._cached_session

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The test's one session (made on first use), installed as default."""
        sess = self._get_cached_session(graph, config, strict=True)
        with self._as_default(sess, use_gpu, force_gpu):
            yield sess

    @contextlib.contextmanager
    def test_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """TF1's name: the cached session without a graph, else a new one on `graph`."""
        if graph is None:
            sess = self._get_cached_session(None, config, strict=False)
            with self._as_default(sess, use_gpu, force_gpu):
                yield sess
        else:
            with self.session(graph, config, use_gpu, force_gpu) as sess:
                yield sess

    test_session.__test__ = False  # NOTE: a helper, not a test, for pytest's collector

    def evaluate(self, tensors):
        """Runs `tensors` in the default session (or the cached one) and returns the values."""
        sess = get_default_session()
        if sess is None:
            with self.test_session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    # -- assertions --------------------------------------------------------------------------
    def _GetNdArray(self, a):  # noqa: N802 - TF's name
        if isinstance(a, (Tensor, Variable)):
            a = self.evaluate(a)
        return a if isinstance(a, np.ndarray) else np.array(a)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err,
                        f"{f1:f} != {f2:f} +/- {err:f}{' (' + msg + ')' if msg else ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2, strict=True):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def _assert_array_close(self, a, b, rtol, atol, msg):
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        detail = f" with contents {b}." if b.ndim <= 3 or b.size < 500 else "."
        self.assertEqual(a.shape, b.shape,
                         f"Shape mismatch: expected {a.shape}, got {b.shape}{detail}")
        if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            return
        msgs = [msg]
        cond = np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b), np.isnan(a) != np.isnan(b))
        x, y = (a[np.where(cond)], b[np.where(cond)]) if a.ndim else (a, b)
        if a.ndim:
            msgs.append(f"not close where = {np.where(cond)}")
        msgs += [f"not close lhs = {x}", f"not close rhs = {y}",
                 f"not close dif = {np.abs(x - y)}", f"not close tol = {atol + rtol * np.abs(y)}",
                 f"dtype = {a.dtype}, shape = {a.shape}"]
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol,
                                   err_msg="\n".join(str(m) for m in msgs), equal_nan=True)

    def _assert_all_close_rec(self, a, b, rtol, atol, path, msg):
        where = f"At {'/'.join(str(p) for p in path)}" if path else ""
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, f"{where} a is not a dict")
            self.assertIsInstance(b, dict, f"{where} b is not a dict")
            self.assertItemsEqual(a.keys(), b.keys(),
                                  f"mismatched keys: a{path} has keys {a.keys()}, but b{path} "
                                  f"has keys {b.keys()}")
            for k in a:
                self._assert_all_close_rec(a[k], b[k], rtol, atol, path + [k], msg)
        elif isinstance(a, (list, tuple)) and not _is_array_like(a):
            self.assertEqual(len(a), len(b), f"Length of {where} differs")
            for i, (ai, bi) in enumerate(zip(a, b, strict=True)):
                self._assert_all_close_rec(ai, bi, rtol, atol, path + [i], msg)
        else:
            self._assert_array_close(a, b, rtol, atol,
                                     f"Mismatched value: a{path} is different from b{path}. "
                                     f"{msg or ''}")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """a and b (arrays, tensors, or nested dicts/lists/tuples of them) are elementwise
        within atol + rtol * |b|; NaNs match NaNs."""
        self._assert_all_close_rec(a, b, rtol, atol, [], msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        if a.dtype == np.float32 or b.dtype == np.float32 or a.dtype == np.complex64:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if a.dtype == np.float16 or b.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if "bfloat16" in (a.dtype.name, b.dtype.name):
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, **kwargs):  # noqa: N802
        try:
            self.assertAllClose(a, b, **kwargs)
        except AssertionError:
            return
        raise AssertionError("The two values are close at all elements")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Same shape and elementwise equal (NaN equals NaN for floats; str equals its
        UTF-8 bytes)."""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        contents = f" Contents: {b!r}. \n{msg}." if b.ndim <= 3 or b.size < 500 else f" {msg}"
        self.assertEqual(a.shape, b.shape,
                         f"Shape mismatch: expected {a.shape}, got {b.shape}.{contents}")
        a, b = _same_string_kind(a, b)
        same = a == b
        if a.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if np.all(same):
            return
        diff = np.logical_not(same)
        x, y = (a[np.where(diff)], b[np.where(diff)]) if a.ndim else (a, b)
        msgs = [msg, f"not equal lhs = {x!r}", f"not equal rhs = {y!r}"]
        if a.ndim:
            msgs.insert(1, f"not equal where = {np.where(diff)}")
        np.testing.assert_array_equal(a, b, err_msg="\n".join(str(m) for m in msgs))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def _compare_all(self, a, comparison, bound, word):
        a = self._GetNdArray(a)
        self.assertTrue(np.all(comparison(a, bound)),
                        f"{a} is not {word} {bound}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.greater, comparison_target, "greater than")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.less, comparison_target, "less than")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.greater_equal, comparison_target, "greater than or equal to")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, np.less_equal, comparison_target, "less than or equal to")

    def assertAllInRange(self, target, lower_bound, upper_bound,  # noqa: N802
                         open_lower_bound=False, open_upper_bound=False):
        target = self._GetNdArray(target)
        low = target > lower_bound if open_lower_bound else target >= lower_bound
        high = target < upper_bound if open_upper_bound else target <= upper_bound
        bad = np.logical_not(np.logical_and(low, high))
        if np.any(bad):
            raise AssertionError(f"{int(bad.sum())} of the {target.size} element(s) are "
                                 f"outside the range {'(' if open_lower_bound else '['}"
                                 f"{lower_bound}, {upper_bound}"
                                 f"{')' if open_upper_bound else ']'}. Subscripts: "
                                 f"{list(zip(*np.where(bad), strict=True))}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        target = self._GetNdArray(target)
        missing = set(np.unique(target).tolist()) - set(expected_set)
        if missing:
            raise AssertionError(f"{sorted(missing)} are not in {expected_set}")

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        targets = target if isinstance(target, list) else [target]
        want = np.dtype(getattr(expected_dtype, "as_numpy_dtype", expected_dtype))
        for arr in targets:
            self.assertEqual(self._GetNdArray(arr).dtype, want)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """The numpy array's shape equals the tensor's static shape.

        Raises:
          TypeError: not a numpy array / not a Tensor.
        """
        if not isinstance(np_array, (np.ndarray, np.generic)):
            raise TypeError("np_array must be a Numpy ndarray or Numpy scalar")
        if not isinstance(tf_tensor, Tensor):
            raise TypeError("tf_tensor must be a Tensor")
        self.assertAllEqual(np_array.shape, tf_tensor.get_shape().as_list(), msg=msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        from tensorweave.runtime.device import canonical
        self.assertEqual(canonical(device1 or ""), canonical(device2 or ""),
                         f"Devices {device1} and {device2} are not equal. {msg or ''}")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r} {msg or ''}")

    def assertItemsEqual(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        self.assertCountEqual(expected_seq, actual_seq, msg)

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):  # noqa: N802
        from google.protobuf import text_format
        if isinstance(expected_message_maybe_ascii, str):
            expected = type(message)()
            text_format.Merge(expected_message_maybe_ascii, expected)
        else:
            expected = expected_message_maybe_ascii
        self.assertEqual(text_format.MessageToString(expected),
                         text_format.MessageToString(message), msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """The block raises `exception_type` whose message (OpError: its message plus the
        "Caused by" op names) matches the regex, or for which the predicate is true."""
        predicate = (expected_err_re_or_predicate if callable(expected_err_re_or_predicate)
                     else lambda e: re.search(expected_err_re_or_predicate, _error_text(e)))
        try:
            yield
        except Exception as e:  # noqa: BLE001 - checked below
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
            return
        self.fail(exception_type.__name__ + " not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)


def _error_text(e) -> str:
    if not isinstance(e, errors.OpError):
        return str(e)
    text = e.message
    op = e.op
    while op is not None:
        text += "\nCaused by: " + op.name
        op = getattr(op, "_original_op", None)
    return text


def _is_array_like(value) -> bool:
    """A flat list/tuple of numbers compares as one array (as TF does for sequences)."""
    return all(isinstance(v, (int, float, complex, np.number, bool, np.bool_)) for v in value)


def _same_string_kind(a, b):
    """str and bytes elements compare as UTF-8 bytes."""
    if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
        encode = lambda arr: np.array([x.encode("utf-8") if isinstance(x, str) else x  # noqa: E731
                                       for x in arr.flat]).reshape(arr.shape)
        return encode(a), encode(b)
    return a, b
