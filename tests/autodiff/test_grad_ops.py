"""Runs the harness cases of the ops the autodiff package registers (tests/ops/grad_cases.py)
and checks the ops' shape functions and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.apply import apply_op
from tests.ops.harness import run_case

try:  # the lead may rename it so the harness collects it (tests/ops/cases_*.py)
    from tests.ops.cases_grad import CASES
except ImportError:
    from tests.ops.grad_cases import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_on_constants(case):
    run_case(case, use_placeholders=False)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_on_placeholders(case):
    run_case(case, use_placeholders=True)


def test_every_registered_helper_op_has_a_case():
    assert {c.op for c in CASES} >= {"SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad",
                                     "ReciprocalGrad", "InvGrad", "BroadcastGradientArgs",
                                     "StridedSliceGrad"}


def test_unary_grad_shapes_must_match():
    with pytest.raises(ValueError, match="Shapes must be equal"):
        apply_op("TanhGrad", tf.zeros([2, 3]), tf.zeros([3, 2]))


def test_strided_slice_grad_static_shape_and_dy_check():
    out = apply_op("StridedSliceGrad", [3, 4], [0, 0], [2, 2], [1, 1], tf.zeros([2, 2]))
    assert out.shape.as_tuple() == (3, 4)
    bad = apply_op("StridedSliceGrad", [3, 4], [0, 0], [2, 2], [1, 1],
                   tf.placeholder_with_default(np.zeros((3, 3), np.float32), [None, None]))
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="shape of dy was"):
        sess.run(bad)
