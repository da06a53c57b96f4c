"""Conditional accumulators: semantics against TensorFlow's records, the TF1 classes, blocking.

The scenarios of `accumulator_cases.py` were run through TensorFlow's ref-typed accumulator
ops by `make_accumulators_expected.py`; the same raw ops run here must give the same records
(values, counts, errors and their messages).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.accumulator_ops import (
    ConditionalAccumulator,
    SparseConditionalAccumulator,
)
from tensorweave.ops.apply import apply_op
from tensorweave.ops.indexed_slices import IndexedSlices
from tests.ops import accumulator_cases as cases

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "data"
                       / "accumulators_expected.json").read_text())


def _acc(sparse, dtype, shape, reduction):
    op = "SparseConditionalAccumulator" if sparse else "ConditionalAccumulator"
    return apply_op(op, dtype=dtype, shape=tf.TensorShape(shape), reduction_type=reduction)


def _sparse_apply(h, step, indices, values, shape):
    known = shape is not None
    return apply_op("SparseAccumulatorApplyGradient", h, step, indices, values,
                    shape if known else tf.constant([], tf.int64), has_known_shape=known)


def _dtype(h):
    return h.op.get_attr("dtype")


OPS = {
    "acc": _acc,
    "apply": lambda h, s, g: apply_op("AccumulatorApplyGradient", h, s, g),
    "sparse_apply": _sparse_apply,
    "take": lambda h, n: apply_op("AccumulatorTakeGradient", h, n, dtype=_dtype(h)),
    "sparse_take": lambda h, n: apply_op("SparseAccumulatorTakeGradient", h, n, dtype=_dtype(h)),
    "set_step": lambda h, s: apply_op("AccumulatorSetGlobalStep", h, s),
    "num": lambda h: apply_op("AccumulatorNumAccumulated", h),
}

SCENARIOS = [("dense", n, s) for n, s in cases.DENSE.items()] + \
    [("sparse", n, s) for n, s in cases.SPARSE.items()]


@pytest.mark.parametrize("kind,name,spec", SCENARIOS, ids=[f"{k}/{n}" for k, n, _ in SCENARIOS])
def test_scenario_matches_tensorflow(kind, name, spec):
    got = cases.run(tf, OPS, kind == "sparse", spec)
    want = EXPECTED[f"{kind}/{name}"]
    if name == "int32_has_no_kernel":   # NOTE: TF lists every attr, in no fixed order
        prefix = "No OpKernel was registered to support Op 'ConditionalAccumulator'"
        assert got[0][:2] == want[0][:2] and got[0][2].startswith(prefix)
        assert want[0][2].startswith(prefix)
        return
    assert got == want


# -- the TF1 classes ---------------------------------------------------------------------------
def test_ops_and_names_are_tf1s():
    with tf.Graph().as_default():
        acc = ConditionalAccumulator(tf.float32, shape=[2, 3])
        ref = acc.accumulator_ref
        assert (ref.op.type, ref.op.name, ref.dtype, ref.shape.as_list()) == (
            "ConditionalAccumulator", "conditional_accumulator", tf.string._as_ref, [2])
        assert acc.name == "conditional_accumulator" and acc.dtype == tf.float32
        apply = acc.apply_grad(np.ones([2, 3], np.float32), local_step=4)
        take = acc.take_grad(2)
        num = acc.num_accumulated()
        step = acc.set_global_step(3)
        assert (apply.type, apply.name) == ("AccumulatorApplyGradient",
                                            "AccumulatorApplyGradient")
        assert take.op.name == "AccumulatorTakeGradient" and take.shape.as_list() == [2, 3]
        assert take.op.inputs[1].op.name == "AccumulatorTakeGradient/num_required"
        assert num.op.name == "conditional_accumulator_NumAccumulated"
        assert (step.type, step.inputs[1].dtype) == ("AccumulatorSetGlobalStep", tf.int64)
        # TF1 colocates every op taking the ref handle with the accumulator
        for op in (apply, take.op, num.op, step):
            assert op.colocation_groups() == [b"loc:@conditional_accumulator"]


def test_apply_grad_checks_the_static_shape():
    with tf.Graph().as_default():
        acc = ConditionalAccumulator(tf.float32, shape=[2])
        with pytest.raises(ValueError):
            acc.apply_grad(np.ones([3], np.float32))
        with pytest.raises(ValueError, match="rank 0"):
            acc.apply_grad(np.ones([2], np.float32), local_step=[1, 2])


def test_dense_average_and_staleness_through_the_classes():
    with tf.Graph().as_default():
        acc = ConditionalAccumulator(tf.float64, shape=[3])
        g = tf.placeholder(tf.float64, [3])
        step = tf.placeholder(tf.int64, [])
        apply, take = acc.apply_grad(g, step), acc.take_grad(2)
        with tf.Session() as s:
            s.run(acc.set_global_step(1))
            s.run(apply, {g: [9, 9, 9], step: 0})           # stale: dropped
            s.run(apply, {g: [1, 2, 3], step: 1})
            s.run(apply, {g: [3, 4, 5], step: 7})
            np.testing.assert_array_equal(s.run(take), [2, 3, 4])
            assert s.run(acc.num_accumulated()) == 0
            s.run(apply, {g: [1, 1, 1], step: 1})           # the take advanced the step to 2
            assert s.run(acc.num_accumulated()) == 0


def test_accumulator_copies_the_gradient():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        acc = ConditionalAccumulator(tf.float32, shape=[2])
        apply = acc.apply_grad(v)
        with tf.Session() as s:
            s.run(v.initializer)
            s.run(apply)
            s.run(v.assign([5.0, 5.0]))
            np.testing.assert_array_equal(s.run(acc.take_grad(1)), [1.0, 2.0])


def test_sparse_classes_give_indexed_slices():
    with tf.Graph().as_default():
        acc = SparseConditionalAccumulator(tf.float32, shape=[4, 2])
        assert acc.accumulator_ref.op.name == "sparse_conditional_accumulator"
        grad = IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                             tf.constant([0, 2], tf.int64), tf.constant([4, 2], tf.int64))
        a1 = acc.apply_indexed_slices_grad(grad)
        a2 = acc.apply_grad([2], [[5.0, 6.0]], grad_shape=[4, 2])
        out = acc.take_indexed_slices_grad(2)
        assert isinstance(out, IndexedSlices)
        with tf.Session() as s:
            s.run([a1])
            s.run([a2])
            idx, vals, shape = s.run([out.indices, out.values, out.dense_shape])
    np.testing.assert_array_equal(idx, [0, 2])
    np.testing.assert_array_equal(vals, [[1, 2], [4, 5]])
    np.testing.assert_array_equal(shape, [4, 2])


def test_shared_name_shares_one_accumulator():
    with tf.Graph().as_default():
        a = ConditionalAccumulator(tf.float32, shape=[1], shared_name="acc")
        b = ConditionalAccumulator(tf.float32, shape=[1], shared_name="acc", name="other")
        c = ConditionalAccumulator(tf.float64, shape=[1], shared_name="acc", name="wrong")
        with tf.Session() as s:
            s.run(a.apply_grad([2.0]))
            s.run(b.apply_grad([4.0]))
            assert s.run(a.num_accumulated()) == 2
            np.testing.assert_array_equal(s.run(b.take_grad(2)), [3.0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="has dtype float32"):
                s.run(c.num_accumulated())


def test_set_global_step_backwards_warns(caplog):
    with tf.Graph().as_default():
        acc = ConditionalAccumulator(tf.float32, shape=[1])
        with tf.Session() as s, caplog.at_level(logging.WARNING, logger="tensorweave"):
            s.run(acc.set_global_step(5))
            s.run(acc.set_global_step(2))
            s.run(acc.apply_grad([1.0], local_step=2))
            assert s.run(acc.num_accumulated()) == 1
    assert "current_global_step_ = 5 >= 2 = new_global_step" in caplog.text


def test_resource_variants_run_on_the_same_kernels():
    with tf.Graph().as_default():
        h = apply_op("ResourceConditionalAccumulator", dtype=tf.float32,
                     shape=tf.TensorShape([2]), shared_name="r")
        assert h.dtype == tf.resource and h.shape.as_list() == []
        apply = apply_op("ResourceAccumulatorApplyGradient", h, tf.constant(0, tf.int64),
                         tf.constant([1.0, 3.0]))
        num = apply_op("ResourceAccumulatorNumAccumulated", h)
        step = apply_op("ResourceAccumulatorSetGlobalStep", h, tf.constant(0, tf.int64))
        take = apply_op("ResourceAccumulatorTakeGradient", h, tf.constant(1),
                        dtype=tf.float32)
        with tf.Session() as s:
            s.run([step])
            s.run(apply)
            assert s.run(num) == 1
            np.testing.assert_array_equal(s.run(take), [1.0, 3.0])


# -- blocking ----------------------------------------------------------------------------------
def _dense_pair():
    acc = ConditionalAccumulator(tf.float32, shape=[2])
    g = tf.placeholder(tf.float32, [2])
    return acc, acc.apply_grad(g), g, acc.take_grad(2)


def test_take_waits_for_the_required_gradients():
    with tf.Graph().as_default():
        acc, apply, g, take = _dense_pair()
        with tf.Session() as s:
            s.run(apply, {g: [1.0, 1.0]})

            def late():
                time.sleep(0.2)
                s.run(apply, {g: [3.0, 5.0]})
            t = threading.Thread(target=late)
            t.start()
            start = time.monotonic()
            out = s.run(take, options=tf.RunOptions(timeout_in_ms=5000))
            t.join(5)
    assert time.monotonic() - start >= 0.15
    np.testing.assert_array_equal(out, [2.0, 3.0])


def test_take_ends_at_the_step_deadline_and_keeps_the_gradients():
    with tf.Graph().as_default():
        acc, apply, g, take = _dense_pair()
        with tf.Session() as s:
            s.run(apply, {g: [1.0, 1.0]})
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(take, options=tf.RunOptions(timeout_in_ms=150))
            assert time.monotonic() - start < 3
            assert s.run(acc.num_accumulated()) == 1


def test_closing_the_session_cancels_a_waiting_take():
    with tf.Graph().as_default():
        _, _, _, take = _dense_pair()
        s = tf.Session()
        errs: list = []

        def wait():
            try:
                s.run(take, options=tf.RunOptions(timeout_in_ms=10000))
            except tf.errors.OpError as e:
                errs.append(e)
        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.2)
        s.close()
        t.join(5)
    assert not t.is_alive() and isinstance(errs[0], tf.errors.CancelledError)
