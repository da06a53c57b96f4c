"""The linear-algebra family beyond the harness: shape inference with unknown dims, errors at
construction (TF's messages, naming the op) and at run time, attr defaults, op names and the
tf.linalg namespace."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors
from tensorweave import linalg as tfl
from tensorweave.ops import linalg_ops as la
from tensorweave.ops.apply import apply_op as A


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _ph(shape, dt=tf.float64):
    return tf.placeholder(dt, shape)


# -- shape inference -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape, full, q, r", [
    ([5, 3], False, [5, 3], [3, 3]),
    ([5, 3], True, [5, 5], [5, 3]),
    ([2, 3, 7], False, [2, 3, 3], [2, 3, 7]),
    ([None, 4, None], False, [None, 4, None], [None, None, None]),
    ([None, 0], False, [None, 0], [0, 0]),
])
def test_qr_static_shapes(shape, full, q, r):
    got_q, got_r = la.qr(_ph(shape), full_matrices=full)
    assert (got_q.shape.as_list(), got_r.shape.as_list()) == (q, r)


def test_svd_and_eig_static_shapes():
    s, u, v = la.svd(_ph([2, 5, 3]), full_matrices=True)
    assert (s.shape.as_list(), u.shape.as_list(), v.shape.as_list()) == \
        ([2, 3], [2, 5, 5], [2, 3, 3])
    s, u, v = A("Svd", _ph([5, 3]), compute_uv=False)
    assert (s.shape.as_list(), u.shape.as_list(), v.shape.as_list()) == ([3], [0], [0])
    e, v = A("SelfAdjointEigV2", _ph([None, 4, None]))
    assert e.shape.as_list() == [None, 4] and v.shape.as_list() == [None, 4, 4]
    e, v = A("SelfAdjointEigV2", _ph(None), compute_v=False)
    assert e.shape.ndims is None and v.shape.as_list() == [0]


def test_solver_and_determinant_static_shapes():
    assert la.matrix_solve(_ph([None, 3, None]), _ph([2, None, 5])).shape.as_list() == [2, 3, 5]
    assert la.matrix_triangular_solve(_ph([2, 1, 3, 3]), _ph([4, 3, 2])).shape.as_list() == \
        [2, 4, 3, 2]
    assert la.matrix_determinant(_ph([4, None, 3])).shape.as_list() == [4]
    sign, log_abs = la.log_matrix_determinant(_ph([2, 3, 3]))
    assert sign.shape.as_list() == log_abs.shape.as_list() == [2]
    assert la.cholesky(_ph([None, None, 3])).shape.as_list() == [None, 3, 3]
    assert la.matrix_inverse(_ph(None)).shape.ndims is None


def test_bool_attr_defaults_are_tf_defaults():
    s, _, _ = A("Svd", _ph([3, 2]))
    e, _ = A("SelfAdjointEigV2", _ph([2, 2]))
    x = A("MatrixTriangularSolve", _ph([2, 2]), _ph([2, 1]))
    q, _ = A("Qr", _ph([3, 2]))
    assert s.op.get_attr("compute_uv") is True and s.op.get_attr("full_matrices") is False
    assert e.op.get_attr("compute_v") is True
    assert x.op.get_attr("lower") is True and x.op.get_attr("adjoint") is False
    assert q.op.get_attr("full_matrices") is False


# -- errors at construction ----------------------------------------------------------------------
@pytest.mark.parametrize("build, message", [
    (lambda: la.matrix_inverse(_ph([3, 4])),
     "Dimensions must be equal, but are 3 and 4 for 'MatrixInverse' (op: 'MatrixInverse') "
     "with input shapes: [3,4]."),
    (lambda: la.cholesky(_ph([3])),
     "Shape must be at least rank 2 but is rank 1 for 'Cholesky' (op: 'Cholesky') with "
     "input shapes: [3]."),
    (lambda: la.matrix_determinant(_ph([2, 3, 4])),
     "Dimensions must be equal, but are 4 and 3 for 'MatrixDeterminant'"),
    (lambda: la.log_matrix_determinant(_ph([3, 4])), "Dimensions must be equal, but are 4 and 3"),
    (lambda: la.self_adjoint_eig(_ph([3, 4])), "Dimensions must be equal, but are 3 and 4"),
    (lambda: la.qr(_ph([4])), "Shape must be at least rank 2 but is rank 1 for 'Qr'"),
    (lambda: la.svd(_ph([4])), "Shape must be at least rank 2 but is rank 1 for 'Svd'"),
    (lambda: la.matrix_solve(_ph([3, 3]), _ph([4, 2])),
     "Dimensions must be equal, but are 3 and 4 for 'MatrixSolve'"),
    (lambda: la.matrix_solve(_ph([2, 3, 3]), _ph([5, 3, 2])),
     "Dimension 0 in both shapes must be equal, but are 2 and 5. Shapes are [2] and [5]."),
    (lambda: la.matrix_solve(_ph([3, 3]), _ph([3])), "Shape must be at least rank 2"),
    (lambda: la.matrix_triangular_solve(_ph([2, 3, 3]), _ph([5, 3, 2])),
     "Dimensions must be equal, but are 2 and 5 for 'MatrixTriangularSolve'"),
    (lambda: la.matrix_triangular_solve(_ph([3, 3]), _ph([2, 2])),
     "Dimensions must be equal, but are 3 and 2"),
])
def test_construction_errors_name_the_op(build, message):
    with pytest.raises(ValueError) as info:
        build()
    assert message in str(info.value)


def test_integer_inputs_are_refused():
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        la.matrix_inverse(np.eye(2, dtype=np.int32))


# -- errors at run time (TF's kernel messages) ---------------------------------------------------
@pytest.mark.parametrize("build, value, message", [
    (la.cholesky, np.array([[1.0, 2.0], [2.0, 1.0]]),
     "Cholesky decomposition was not successful. The input might not be valid."),
    (la.matrix_inverse, np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]),
     "Input is not invertible."),
    (lambda x: la.matrix_solve(x, np.ones((2, 1))), np.array([[1.0, 2.0], [2.0, 4.0]]),
     "Input matrix is not invertible."),
    (lambda x: la.matrix_triangular_solve(x, np.ones((2, 1))), np.array([[1.0, 5.0], [2.0, 0.0]]),
     "Input matrix is not invertible."),
    (la.matrix_inverse, np.ones((2, 3)), "Input matrix must be square."),
    (la.qr, np.ones(3), "Input tensor 0 must have rank >= 2, got 1"),
    (la.matrix_determinant, np.ones((2, 3)), "Input matrices must be squares, got 2 != 3"),
])
def test_runtime_errors(build, value, message):
    x = tf.placeholder(tf.float64)
    out = build(x)
    with pytest.raises(errors.InvalidArgumentError) as info:
        _run(out, {x: value})
    assert message in str(info.value)


def test_matrix_solve_outer_dims_must_match_at_run_time():
    a, b = tf.placeholder(tf.float64), tf.placeholder(tf.float64)
    with pytest.raises(errors.InvalidArgumentError, match="same outer dimensions"):
        _run(la.matrix_solve(a, b), {a: np.eye(2)[None].repeat(2, 0), b: np.ones((3, 2, 1))})


# -- values, names, namespace -------------------------------------------------------------------
def test_ops_are_named_as_tf_names_them():
    x = _ph([3, 3])
    assert la.qr(x)[0].op.name == "Qr"
    assert la.svd(x)[0].op.name == "Svd"
    assert la.self_adjoint_eig(x)[0].op.name == "SelfAdjointEigV2"
    assert la.self_adjoint_eigvals(x).op.name == "SelfAdjointEigV2_1"
    assert la.matrix_inverse(x, name="inv").op.name == "inv"
    assert la.cholesky_solve(x, x).op.name == "cholesky_solve/MatrixTriangularSolve_1"
    assert la.logdet(x).op.name == "logdet/mul"


def test_svd_wrapper_returns_values_only_and_real_singular_values():
    a = np.array([[3.0, 0.0], [4.0, 5.0]], np.complex64)
    s = la.svd(a, compute_uv=False)
    assert s.dtype == tf.float32
    np.testing.assert_allclose(_run(s), np.linalg.svd(a, compute_uv=False), rtol=1e-5)


def test_cholesky_solve_and_logdet_values():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 4))
    spd = x @ x.swapaxes(-1, -2) + 4 * np.eye(4)
    rhs = rng.normal(size=(2, 4, 3))
    got_x, got_logdet = _run([la.cholesky_solve(la.cholesky(spd), rhs), la.logdet(spd)])
    np.testing.assert_allclose(got_x, np.linalg.solve(spd, rhs), rtol=1e-10)
    np.testing.assert_allclose(got_logdet, np.linalg.slogdet(spd)[1], rtol=1e-10)


def test_float32_stays_float32_at_run_time():
    a = (np.eye(3) * 2 + 0.1).astype(np.float32)
    outs = _run([la.matrix_inverse(a), la.matrix_determinant(a), la.cholesky(a), la.qr(a)[0],
                 la.svd(a)[0], la.self_adjoint_eig(a)[1], la.matrix_solve(a, a),
                 la.matrix_triangular_solve(a, a), la.log_matrix_determinant(a)[1]])
    assert all(np.asarray(o).dtype == np.float32 for o in outs)


def test_tf_linalg_namespace():
    names = {"qr": "Qr", "inv": "MatrixInverse", "det": "MatrixDeterminant",
             "cholesky": "Cholesky", "eigvalsh": "SelfAdjointEigV2"}
    for attr, op_type in names.items():
        assert getattr(tfl, attr)(_ph([2, 2])).__class__.__name__ in ("Tensor", "tuple")
        assert op_type in {op.type for op in tf.get_default_graph().get_operations()}
    assert tfl.solve is la.matrix_solve and tfl.triangular_solve is la.matrix_triangular_solve
    assert tfl.slogdet is la.log_matrix_determinant and tfl.eigh is la.self_adjoint_eig
    assert tfl.svd is la.svd and tfl.cholesky_solve is la.cholesky_solve
    assert tfl.logdet is la.logdet
