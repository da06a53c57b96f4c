"""Math family API behaviour: TF1 op names, operators, division semantics, reductions' axes,
argmax output types, casts, errors at construction and at run time, static evaluation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import math_matmul_ops as mm
from tensorweave.ops import math_ops as m
from tensorweave.ops import reduction_ops as r
from tensorweave.ops.registry import OPS
from tensorweave.ops.shape_inference import constant_value
from tensorweave.runtime.kernels import registry as kernels
from tensorweave.runtime.kernels.cpu import math as _math_kernels  # noqa: F401
from tensorweave.runtime.kernels.cpu import reduction as _reduction_kernels  # noqa: F401


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _needs(*op_types):
    missing = [t for t in op_types if t not in OPS]
    if missing:
        pytest.skip(f"needs ops of another family: {missing}")


def _op_names():
    return [(op.name, op.type) for op in tf.get_default_graph().get_operations()]


# -- names ------------------------------------------------------------------------------------
def test_operator_names_follow_tf():
    a = tf.placeholder(tf.float32, [2, 3], name="a")
    outs = [a + 1.0, 1.0 + a, a - 2.0, a * a, a / 2.0, a // 2.0, a % 2.0, a ** 2.0, -a, abs(a)]
    names = [(t.op.name, t.op.type) for t in outs]
    assert names == [("add", "AddV2"), ("add_1", "AddV2"), ("sub", "Sub"), ("mul", "Mul"),
                     ("truediv", "RealDiv"), ("floordiv", "FloorDiv"), ("mod", "FloorMod"),
                     ("pow", "Pow"), ("Neg", "Neg"), ("Abs", "Abs")]
    assert outs[0].op.inputs[1].op.name == "add/y"
    assert outs[1].op.inputs[0].op.name == "add_1/x"
    assert outs[0].op.inputs[1].dtype == tf.float32


def test_operator_in_name_scope_and_matmul_operator():
    x = tf.constant(np.ones((2, 3), np.float32))
    w = tf.constant(np.ones((3, 4), np.float32))
    with tf.name_scope("layer"):
        y = x @ w
        z = y + 1.0
    assert (y.op.name, y.op.type) == ("layer/matmul", "MatMul")
    assert (z.op.name, z.op.inputs[1].op.name) == ("layer/add", "layer/add/y")
    np.testing.assert_allclose(_run(z), np.full((2, 4), 4.0))


def test_wrapper_default_names():
    x = tf.constant([[1.0, -2.0]])
    assert m.add(x, 1.0).op.name == "Add"
    assert m.add(x, 1.0, name="plus").op.name == "plus"
    assert m.multiply(x, x).op.name == "Mul"
    assert mm.matmul(x, x, transpose_b=True).op.name == "MatMul"
    assert m.cast(x, tf.int32).op.name == "Cast"
    assert m.to_float(m.cast(x, tf.int32)).op.name == "ToFloat"
    assert m.to_int64(x).op.name == "ToInt64"
    assert m.div(x, x).op.name == "div"
    assert m.truediv(x, x).op.name == "truediv"
    assert r.reduce_sum(x).op.name == "Sum"
    assert r.argmax(x).op.name == "ArgMax"
    clipped = mm.clip_by_value(x, 0.0, 1.0)
    assert (clipped.op.name, clipped.op.type) == ("clip_by_value", "Maximum")
    assert clipped.op.inputs[0].op.name == "clip_by_value/Minimum"


def test_reduce_all_axes_uses_const_when_rank_known():
    x = tf.constant(np.ones((2, 3), np.float32), name="x")
    s = r.reduce_sum(x)
    axes = s.op.inputs[1]
    assert (axes.op.name, axes.op.type) == ("Const", "Const")
    np.testing.assert_array_equal(constant_value(axes), [0, 1])
    assert s.shape.as_list() == []


def test_scalar_reduction_of_unknown_rank_is_scalar():
    _needs("Rank", "Range")
    x = tf.placeholder(tf.float32)
    s = r.reduce_sum(x)
    assert s.shape.as_list() == []
    assert _run(s, {x: np.ones((2, 3, 4), np.float32)}) == 24.0


def test_same_op_name_twice_is_uniquified_with_scope():
    a = tf.constant(1.0)
    b, c = a + 1.0, a + 2.0
    assert (b.op.name, c.op.name) == ("add", "add_1")
    assert c.op.inputs[1].op.name == "add_1/y"


# -- operators --------------------------------------------------------------------------------
def test_comparison_operators_and_equality_identity():
    a = tf.constant([1, 2, 3])
    b = tf.constant([3, 2, 1])
    assert [t.op.type for t in (a < b, a <= b, a > b, a >= b)] == \
        ["Less", "LessEqual", "Greater", "GreaterEqual"]
    lt, ge = _run([a < b, a >= 2])
    np.testing.assert_array_equal(lt, [True, False, False])
    np.testing.assert_array_equal(ge, [False, True, True])
    assert (a == b) is False and (a == a) is True and (a != b) is True


def test_boolean_operators():
    p = tf.constant([True, True, False, False])
    q = tf.constant([True, False, True, False])
    xor = p ^ q
    assert (xor.op.name, xor.op.type) == ("xor", "LogicalAnd")
    got = _run([p & q, p | q, xor, ~p])
    np.testing.assert_array_equal(got[0], [True, False, False, False])
    np.testing.assert_array_equal(got[1], [True, True, True, False])
    np.testing.assert_array_equal(got[2], [False, True, True, False])
    np.testing.assert_array_equal(got[3], [False, False, True, True])


def test_reversed_operators_compute_right_order():
    x = tf.constant([2.0, 4.0])
    got = _run([10.0 - x, 10.0 / x, 2.0 ** x, 9.0 // x, 9.0 % x])
    np.testing.assert_allclose(got[0], [8, 6])
    np.testing.assert_allclose(got[1], [5, 2.5])
    np.testing.assert_allclose(got[2], [4, 16])
    np.testing.assert_allclose(got[3], [4, 2])
    np.testing.assert_allclose(got[4], [1, 1])


def test_numpy_scalar_on_the_left_defers_to_tensor():
    x = tf.constant([1.0, 2.0])
    y = np.float32(3.0) * x
    assert isinstance(y, tf.Tensor) and y.op.type == "Mul"
    np.testing.assert_allclose(_run(y), [3, 6])


# -- division ---------------------------------------------------------------------------------
def test_truediv_casts_integers_like_tf():
    i32 = tf.constant([7, -7], dtype=tf.int32)
    i16 = tf.constant([7, -7], dtype=tf.int16)
    q32, q16 = i32 / 2, i16 / 2
    assert (q32.dtype, q16.dtype) == (tf.float64, tf.float32)
    assert [(t.op.name, t.op.type) for t in q32.op.inputs] == \
        [("truediv/Cast", "Cast"), ("truediv/Cast_1", "Cast")]
    np.testing.assert_allclose(_run(q32), [3.5, -3.5])


def test_tf1_div_floors_integers_and_divides_floats():
    ints = m.div(tf.constant([7, -7]), tf.constant([2, 2]))
    floats = m.div(tf.constant([7.0, -7.0]), 2.0)
    assert (ints.op.type, floats.op.type) == ("FloorDiv", "RealDiv")
    got = _run([ints, floats])
    np.testing.assert_array_equal(got[0], [3, -4])
    np.testing.assert_allclose(got[1], [3.5, -3.5])


def test_integer_kernels_truncate_or_floor_as_tf():
    x, y = tf.constant([7, -7, 7, -7]), tf.constant([2, 2, -2, -2])
    got = _run([m._op("Div", x, y), m.truncatediv(x, y), x // y, m.truncatemod(x, y), x % y])
    np.testing.assert_array_equal(got[0], [3, -3, -3, 3])
    np.testing.assert_array_equal(got[1], [3, -3, -3, 3])
    np.testing.assert_array_equal(got[2], [3, -4, -4, 3])
    np.testing.assert_array_equal(got[3], [1, -1, 1, -1])
    np.testing.assert_array_equal(got[4], [1, 1, -1, -1])


def test_integer_division_by_zero_is_invalid_argument():
    y = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
        _run(tf.constant([1, 2]) // y, {y: np.array([1, 0], np.int32)})


def test_divide_and_div_no_nan():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([0.0, 4.0])
    d = m.divide(x, y, name="ratio")
    assert d.op.name == "ratio"
    np.testing.assert_allclose(_run(m.div_no_nan(x, y)), [0.0, 0.5])


# -- dtype errors at construction -------------------------------------------------------------
def test_mixed_dtype_operator_names_the_op():
    with pytest.raises(TypeError, match="AddV2"):
        tf.constant(1) + tf.constant(1.0)  # noqa: B018


def test_literal_that_cannot_be_converted_raises():
    with pytest.raises(TypeError):
        tf.constant(1) + 1.5  # noqa: B018


def test_truediv_mismatched_dtypes_raises():
    with pytest.raises(TypeError, match="same dtype"):
        m.truediv(tf.constant(1), tf.constant(1.0))


def test_disallowed_dtype_names_op_and_types():
    with pytest.raises(TypeError, match="Sqrt"):
        m.sqrt(tf.constant([1, 2]))


# -- matmul -----------------------------------------------------------------------------------
def test_matmul_shape_mismatch_message():
    a = tf.constant(np.ones((2, 3), np.float32))
    b = tf.constant(np.ones((4, 5), np.float32))
    with pytest.raises(ValueError) as e:
        mm.matmul(a, b)
    assert str(e.value) == ("Dimensions must be equal, but are 3 and 4 for 'MatMul' (op: "
                            "'MatMul') with input shapes: [2,3], [4,5].")


def test_matmul_rank_error_and_transpose_flags():
    a = tf.constant(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        m._op("MatMul", a, tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
        mm.matmul(a, a, transpose_a=True, adjoint_a=True)
    t = mm.matmul(a, a, transpose_b=True)
    assert t.shape.as_list() == [2, 2] and t.op.get_attr("transpose_b") is True


def test_batch_matmul_broadcasts_batch_dims():
    a = tf.placeholder(tf.float32, [None, 1, 2, 3])
    b = tf.constant(np.ones((5, 3, 4), np.float32))
    c = mm.matmul(a, b)
    assert c.op.type == "BatchMatMulV2" and c.shape.as_list() == [None, 5, 2, 4]
    got = _run(c, {a: np.ones((2, 1, 2, 3), np.float32)})
    np.testing.assert_allclose(got, np.full((2, 5, 2, 4), 3.0))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 5"):
        mm.matmul(tf.constant(np.ones((2, 2, 3), np.float32)), b)


def test_add_n_checks_shapes_and_returns_single_input():
    a = tf.constant([1.0, 2.0])
    assert mm.add_n([a]) is a
    assert mm.add_n([a], name="total").op.type == "Identity"
    with pytest.raises(ValueError, match="AddN"):
        mm.add_n([a, tf.constant([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(_run(mm.add_n([a, a, a])), [3, 6])
    with pytest.raises(ValueError):
        mm.add_n([])


def test_add_n_kernel_rejects_runtime_shape_mismatch():
    p = tf.placeholder(tf.float32)
    q = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size and shape"):
        _run(mm.add_n([p, q]), {p: np.ones(3, np.float32), q: np.ones(1, np.float32)})


def test_scalar_mul_requires_scalar():
    x = tf.constant([1.0, 2.0])
    np.testing.assert_allclose(_run(mm.scalar_mul(3.0, x)), [3, 6])
    with pytest.raises(ValueError, match="Only scalar multiply"):
        mm.scalar_mul([1.0, 2.0], x)


def test_tensordot_static():
    _needs("Transpose", "Reshape")
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = mm.tensordot(tf.constant(a), tf.constant(b), [[1, 2], [1, 0]])
    assert out.shape.as_list() == [2]
    np.testing.assert_allclose(_run(out), np.tensordot(a, b, [[1, 2], [1, 0]]))


def test_trace():
    _needs("MatrixDiagPart")
    x = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    np.testing.assert_allclose(_run(mm.trace(tf.constant(x))), np.trace(x, axis1=1, axis2=2))


# -- reductions -------------------------------------------------------------------------------
_X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10


@pytest.mark.parametrize("kwargs,axis", [
    ({"axis": 1}, 1), ({"axis": -1}, -1), ({"axis": [0, 2]}, (0, 2)),
    ({"reduction_indices": [0, -1]}, (0, -1)), ({"axis": np.int64(2)}, 2), ({}, None),
])
def test_reduce_sum_axis_forms(kwargs, axis):
    x = tf.constant(_X)
    for keep in (False, True):
        out = r.reduce_sum(x, keepdims=keep, **kwargs)
        want = _X.sum(axis=axis, keepdims=keep)
        assert out.shape.as_list() == list(want.shape)
        np.testing.assert_allclose(_run(out), want)


def test_reduce_keep_dims_alias_and_conflicts():
    x = tf.constant(_X)
    assert r.reduce_max(x, 0, keep_dims=True).shape.as_list() == [1, 3, 4]
    with pytest.raises(ValueError, match="keepdims"):
        r.reduce_max(x, 0, keepdims=True, keep_dims=True)
    with pytest.raises(ValueError, match="reduction_indices"):
        r.reduce_max(x, 0, reduction_indices=1)


def test_reduction_axis_out_of_range_at_construction_and_run():
    x = tf.constant(_X)
    with pytest.raises(ValueError, match="Invalid reduction dimension 3"):
        r.reduce_sum(x, 3)
    axis = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid reduction dimension"):
        _run(r.reduce_sum(x, axis), {axis: 5})


def test_reduce_mean_of_integers_is_integer_division():
    x = tf.constant([[1, 2], [-1, -2]])
    out = r.reduce_mean(x, 1)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(_run(out), [1, -1])
    assert _run(r.reduce_mean(tf.constant([1, 0, 1, 0]))) == 0
    assert _run(r.reduce_mean(tf.constant([1.0, 0.0, 1.0, 0.0]))) == 0.5


def test_reductions_keep_integer_dtype():
    x = tf.constant(np.array([[2**30, 2**30]], np.int32))
    s = r.reduce_sum(x, 1)
    assert s.dtype == tf.int32 and _run(s).dtype == np.int32


def test_reduce_all_any_and_prod():
    b = tf.constant([[True, False], [True, True]])
    np.testing.assert_array_equal(_run(r.reduce_all(b, 1)), [False, True])
    np.testing.assert_array_equal(_run(r.reduce_any(b, 0)), [True, True])
    assert _run(r.reduce_prod(tf.constant([[1, 2], [3, 4]]))) == 24


def test_reduce_logsumexp_is_stable():
    _needs("Select", "ZerosLike", "StopGradient", "Reshape", "Shape")
    x = np.array([[1000.0, 1000.0], [-np.inf, 0.0]], np.float32)
    out = r.reduce_logsumexp(tf.constant(x), 1)
    np.testing.assert_allclose(_run(out), [1000 + math.log(2), 0.0], rtol=1e-6)


def test_reduce_variance_and_std():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], np.float32)
    var, std = r.reduce_variance(tf.constant(x), 1), r.reduce_std(tf.constant(x), axis=1)
    assert var.op.name.startswith("reduce_variance/")
    got = _run([var, std])
    np.testing.assert_allclose(got[0], x.var(1), rtol=1e-6)
    np.testing.assert_allclose(got[1], x.std(1), rtol=1e-6)


def test_count_nonzero():
    x = tf.constant([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    out = r.count_nonzero(x, 1)
    assert out.dtype == tf.int64 and out.op.name.startswith("count_nonzero/")
    np.testing.assert_array_equal(_run(out), [1, 2])
    s = r.count_nonzero(tf.constant([b"", b"a", b"  "]), dtype=tf.int32)
    assert s.dtype == tf.int32 and _run(s) == 2


# -- argmax -----------------------------------------------------------------------------------
def test_argmax_output_type_dimension_alias_and_default_axis():
    x = tf.constant([[1.0, 9.0, 3.0], [7.0, 2.0, 7.0]])
    a64 = r.argmax(x, 1)
    a32 = r.argmin(x, dimension=1, output_type=tf.int32)
    a0 = r.argmax(x)
    assert (a64.dtype, a32.dtype, a0.shape.as_list()) == (tf.int64, tf.int32, [3])
    got = _run([a64, a32, a0])
    np.testing.assert_array_equal(got[0], [1, 0])
    np.testing.assert_array_equal(got[1], [0, 1])
    np.testing.assert_array_equal(got[2], [1, 0, 1])
    with pytest.raises(ValueError, match="both"):
        r.argmax(x, 1, dimension=1)
    with pytest.raises(ValueError, match="Expected dimension in the range"):
        r.argmax(x, 2)


# -- casts ------------------------------------------------------------------------------------
def test_cast_truncates_toward_zero_and_handles_bool():
    x = tf.constant([1.9, -1.9, 0.0, 2.5])
    i, b = m.cast(x, tf.int32), m.cast(x, tf.bool)
    got = _run([i, b, m.cast(b, tf.float32)])
    np.testing.assert_array_equal(got[0], [1, -1, 0, 2])
    np.testing.assert_array_equal(got[1], [True, True, False, True])
    np.testing.assert_array_equal(got[2], [1, 1, 0, 1])
    assert m.cast(x, tf.float32) is x


def test_saturate_cast_clamps():
    x = tf.constant([-5.0, 100.0, 300.0])
    out = m.saturate_cast(x, tf.uint8)
    assert out.dtype == tf.uint8
    np.testing.assert_array_equal(_run(out), [0, 100, 255])


def test_round_is_bankers_and_identity_on_ints():
    np.testing.assert_array_equal(_run(m.round(tf.constant([0.5, 1.5, 2.5, -2.5]))),
                                  [0, 2, 2, -2])
    ints = tf.constant([1, 2])
    assert m.round(ints) is ints


# -- complex ----------------------------------------------------------------------------------
def test_complex_helpers():
    z = m.complex(tf.constant([1.0, -2.0]), tf.constant([3.0, 4.0]))
    assert z.dtype == tf.complex64
    re, im, mag = _run([m.real(z), m.imag(z), m.abs(z)])
    np.testing.assert_allclose(re, [1, -2])
    np.testing.assert_allclose(im, [3, 4])
    np.testing.assert_allclose(mag, [math.sqrt(10), math.sqrt(20)], rtol=1e-6)
    x = tf.constant([1.0])
    assert m.real(x) is x and m.conj(x) is x
    with pytest.raises(TypeError, match="incorrect types"):
        m.complex(tf.constant([1.0]), tf.constant([1.0], dtype=tf.float64))


# -- elementwise accuracy and edge semantics --------------------------------------------------
def test_erf_and_lgamma_accuracy():
    xs = np.linspace(-4, 4, 41)
    got64, got32, lg = _run([m.erf(tf.constant(xs)), m.erf(tf.constant(xs.astype(np.float32))),
                             m.lgamma(tf.constant(xs[xs > 0]))])
    want = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(got64, want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got32, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lg, [math.lgamma(v) for v in xs[xs > 0]], rtol=1e-10,
                               atol=1e-12)


def test_equal_incompatible_shapes():
    a, b = tf.constant([1, 2, 3]), tf.constant([1, 2])
    with pytest.raises(ValueError, match="Equal"):
        m.equal(a, b)
    p = tf.placeholder(tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcast|Incompatible"):
        _run(m.equal(a, p), {p: np.array([1, 2], np.int32)})
    relaxed = m._op("NotEqual", a, p, incompatible_shape_error=False)
    assert _run(relaxed, {p: np.array([1, 2], np.int32)}) == np.bool_(True)


def test_logical_xor_structure():
    out = m.logical_xor(tf.constant([True, False]), tf.constant([True, True]))
    assert (out.op.name, out.op.type) == ("LogicalXor", "LogicalAnd")
    np.testing.assert_array_equal(_run(out), [False, True])


# -- scans and segments -----------------------------------------------------------------------
def test_cumsum_variants():
    x = tf.constant([1, 2, 3])
    first = r.cumsum(x)
    assert first.op.name == "Cumsum"
    got = _run([first, r.cumsum(x, exclusive=True), r.cumsum(x, reverse=True),
                r.cumsum(x, exclusive=True, reverse=True), r.cumprod(x, exclusive=True)])
    assert [g.tolist() for g in got] == [[1, 3, 6], [0, 1, 3], [6, 5, 3], [5, 3, 0],
                                         [1, 1, 2]]


def test_unsorted_segment_sum_errors_and_shape():
    data = tf.constant(np.ones((4, 2), np.float32))
    out = r.unsorted_segment_sum(data, [0, 2, -1, 2], 3)
    assert out.shape.as_list() == [3, 2]
    np.testing.assert_allclose(_run(out), [[1, 1], [0, 0], [2, 2]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        _run(r.unsorted_segment_sum(data, [0, 5, 0, 0], 3))
    with pytest.raises(ValueError, match="does not start with"):
        r.unsorted_segment_sum(data, [0, 1, 2], 3)


def test_segment_ids_must_be_sorted():
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        _run(r.segment_sum(tf.constant([1.0, 2.0, 3.0]), [0, 2, 1]))


def test_bincount_wrapper():
    _needs("Shape")
    arr = tf.constant([1, 1, 4])
    got = _run([r.bincount(arr), r.bincount(arr, minlength=7), r.bincount(arr, maxlength=2)])
    assert [g.tolist() for g in got] == [[0, 2, 0, 0, 1], [0, 2, 0, 0, 1, 0, 0], [0, 2]]


def test_linspace():
    out = mm.linspace(0.0, 1.0, 5)
    assert out.op.name == "LinSpace" and out.shape.as_list() == [5]
    np.testing.assert_allclose(_run(out), [0, 0.25, 0.5, 0.75, 1])


# -- static evaluation and kernel structure ---------------------------------------------------
def test_constant_evaluation_through_cast_and_int_arithmetic():
    dims = tf.constant([2, 3])
    assert constant_value(m.cast(dims, tf.float32)).tolist() == [2.0, 3.0]
    assert constant_value(dims * 2 + 1).tolist() == [5, 7]
    assert constant_value(r.reduce_prod(dims)) == 6
    assert constant_value(tf.constant([1.5]) * 2.0) is None  # floats are left to run time
    p = tf.placeholder(tf.int32, [2])
    assert constant_value(p + 1) is None


def test_binary_kernels_are_plain_ufuncs():
    node = kernels.KernelNode("n", "AddV2", {"T": tf.float32}, [tf.float32] * 2, [tf.float32])
    for op, ufunc in (("AddV2", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
                      ("Maximum", np.maximum), ("Less", np.less)):
        assert kernels.lookup_kernel(op).factory(node) is ufunc
    assert kernels.lookup_kernel("RealDiv").factory(node) is np.divide


def test_kernels_do_not_mutate_or_alias_inputs():
    value = np.array([[1.5, -2.0]], np.float32)
    for op in ("Round", "Sign", "Floor", "Cast", "Neg"):
        k = kernels.lookup_kernel(op).factory(
            kernels.KernelNode("n", op, {"T": tf.float32, "SrcT": tf.float32,
                                         "DstT": tf.float32}, [tf.float32], [tf.float32]))
        before = value.copy()
        out = k(value)
        assert not np.shares_memory(out, value), op
        np.testing.assert_array_equal(value, before)


def test_a_reduction_over_no_axes_forwards_its_input_and_a_fetch_still_copies():
    """Sum over [] is the identity: the kernel returns its input (no copy of a big gradient);
    since it may alias, a fetched reduction of a variable is not changed by a later assign.
    EuclideanNorm over [] is |x|, not x: it computes."""
    assert kernels.lookup_kernel("Sum").forwards_input
    assert not kernels.lookup_kernel("EuclideanNorm").forwards_input
    start = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    v = tf.Variable(start)
    total = tf.reduce_sum(v, axis=[])
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(total)
        sess.run(v.assign_add(tf.ones([2, 3])))
        np.testing.assert_array_equal(got, start)
        np.testing.assert_array_equal(sess.run(tf.reduce_max(v, axis=[])), start + 1)
        np.testing.assert_array_equal(sess.run(tf.reduce_euclidean_norm(v - 2, axis=[])),
                                      np.abs(start - 1))
