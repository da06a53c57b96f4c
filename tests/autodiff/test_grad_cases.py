"""Every gradient function against central differences, and a check that none is missing.

Each case of `grad_cases.py` is built twice: on placeholders of static shape (the gradient
graph can use constants), and on placeholders of unknown shape (it must use Shape arithmetic
and BroadcastGradientArgs), unless the case opts out.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.autodiff.registry import registered_gradients
from tensorweave.client.gradient_checker import compute_gradient
from tensorweave.ops.registry import OPS
from tests.autodiff import families
from tests.autodiff.grad_cases import CASES, ELSEWHERE, NO_GRADIENT, GradCase

DYNAMIC = [c for c in CASES if c.dynamic]


def _check(case: GradCase, dynamic: bool) -> None:
    missing = families.missing_ops(case.ops + case.needs)
    if missing:
        broken = f" (modules failing to import: {families.IMPORT_FAILURES})" \
            if families.IMPORT_FAILURES else ""
        pytest.skip(f"op(s) not registered yet (op or CPU kernel): {', '.join(missing)}{broken}")
    g = tf.Graph()
    with g.as_default():
        xs = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype),
                             shape=None if dynamic else np.shape(a)) for a in case.inputs]
        y = case.build(*xs)
        built = {op.type for op in g.get_operations()}
        absent = [o for o in case.ops if o not in built]
        assert not absent, f"case {case.id} built no {absent} op"
        feeds = dict(zip(xs, case.inputs))
        with tf.Session(graph=g) as sess:
            y_shape = np.shape(sess.run(y, feeds))
            for i in case.wrt_indices():
                others = {x: v for j, (x, v) in enumerate(feeds.items()) if j != i}
                jt, jn = compute_gradient(xs[i], np.shape(case.inputs[i]), y, y_shape,
                                          x_init_value=np.asarray(case.inputs[i]),
                                          delta=case.delta, extra_feed_dict=others)
                np.testing.assert_allclose(jt, jn, rtol=case.rtol, atol=case.atol,
                                           err_msg=f"{case.id}: d y / d input {i}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradient_static_shapes(case):
    _check(case, dynamic=False)


@pytest.mark.parametrize("case", DYNAMIC, ids=[c.id for c in DYNAMIC])
def test_gradient_unknown_shapes(case):
    _check(case, dynamic=True)


def _floating(op_def, specs) -> bool:
    for s in specs:
        if s.dtype is not None:
            if s.dtype.is_floating:
                return True
            continue
        attr = op_def.attrs.get(s.type_attr or s.type_list_attr)
        if attr is None or not attr.allowed or any(t.is_floating for t in attr.allowed):
            return True
    return False


def _project_op_types() -> list[str]:
    """Op types registered by tensorweave itself (not by a test)."""
    root = os.path.dirname(os.path.abspath(tf.__file__))
    return [n for n in OPS.names()
            if os.path.abspath(OPS.get(n).defined_at.rsplit(":", 1)[0]).startswith(root)]


def _differentiable_types() -> list[str]:
    """Project op types with floating inputs and outputs that are not declared
    NotDifferentiable, do not update a variable (Ref inputs) and are not listed in
    NO_GRADIENT: each needs a gradient function and a case."""
    grads = registered_gradients()
    out = []
    for name in _project_op_types():
        op_def = OPS.get(name)
        if name in grads and grads[name] is None:
            continue
        if any(s.is_ref for s in op_def.inputs) or name in NO_GRADIENT:
            continue
        if _floating(op_def, op_def.inputs) and _floating(op_def, op_def.outputs):
            out.append(name)
    return out


def test_every_differentiable_op_has_a_gradient_case():
    covered = {o for c in CASES for o in c.ops} | set(ELSEWHERE)
    missing = sorted(set(_differentiable_types()) - covered)
    assert not missing, ("differentiable op types without a gradient case (add one to "
                         f"tests/autodiff/grad_cases.py, or a reason to NO_GRADIENT): {missing}")


def test_every_registered_gradient_function_has_a_case():
    covered = {o for c in CASES for o in c.ops} | set(ELSEWHERE)
    project = set(_project_op_types())
    with_fn = {n for n, fn in registered_gradients().items() if fn is not None and n in project}
    missing = sorted(with_fn - covered)
    assert not missing, f"gradient functions without a case: {missing}"


def test_no_gradient_entries_really_have_none():
    grads = registered_gradients()
    wrong = sorted(n for n in NO_GRADIENT if grads.get(n) is not None)
    assert not wrong, f"listed in NO_GRADIENT but a gradient is registered: {wrong}"

