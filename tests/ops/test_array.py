"""API behaviour of the array family: indexing vs numpy, construction-time errors, static shapes
through shape chains, TF1 where/select semantics, one_hot, names, and the composite ops."""

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorweave as tw
from tensorweave import errors
from tensorweave.ops import (
    array_ops,
    creation_ops,
    diag_ops,
    gather_ops,
    joining_ops,
    slicing_ops,
)
from tensorweave.ops.apply import apply_op
from tensorweave.ops.shape_inference import constant_value
from tensorweave.runtime.kernels.cpu import (  # noqa: F401 - registers the kernels
    array,
    creation,
    diag,
    gather,
    joining,
    slicing,
)


def _namespace():
    ns = {k: getattr(tw, k) for k in dir(tw) if not k.startswith("_")}
    for mod in (array_ops, joining_ops, slicing_ops, gather_ops, creation_ops, diag_ops):
        ns.update({k: getattr(mod, k) for k in mod.__all__})
    return types.SimpleNamespace(**ns)


tf = _namespace()
X = np.arange(120, dtype=np.float32).reshape(4, 5, 6)


class _Index:
    def __getitem__(self, key):
        return key


I = _Index()


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- Tensor.__getitem__ vs numpy --------------------------------------------------------------
INDEXES = [
    I[0], I[-1], I[1:3], I[::2], I[::-1], I[-2:], I[:-1], I[1:-1:2], I[3:0:-1], I[::-2],
    I[5:], I[-10:10], I[2:1], I[0, 1], I[0, 1, 2], I[-1, -2, -3], I[..., 0], I[..., ::-1],
    I[0, ...], I[0, ..., 1], I[None], I[:, None], I[..., None], I[None, ..., None],
    I[1, None, ::2], I[:, 1:4:2, -1], I[::-1, ::-1, ::-1], I[:, :, 4:1:-2], I[..., -1, None, 1:],
    I[None, 0, None], I[1:2, None, ..., 0], I[:, np.int64(2)], I[1:, ...], I[..., :], I[()],
    I[-1:-5:-1, 4, ::3], I[:, -6:], I[None, None, 2],
]


def test_getitem_matches_numpy_on_known_shape():
    x = tf.constant(X)
    outs = [x[idx] for idx in INDEXES]
    for idx, out in zip(INDEXES, outs):
        assert out.shape.as_list() == list(X[idx].shape), idx
        assert out.op.type == "StridedSlice"
    for idx, got in zip(INDEXES, run(outs)):
        np.testing.assert_array_equal(got, X[idx], err_msg=str(idx))


def test_getitem_matches_numpy_on_partial_shape():
    x = tf.placeholder(tf.float32, [None, 5, 6])
    outs = [x[idx] for idx in INDEXES]
    for idx, out in zip(INDEXES, outs):
        assert out.shape.is_compatible_with(X[idx].shape), idx
        assert out.shape.ndims == X[idx].ndim, idx
    for idx, got in zip(INDEXES, run(outs, {x: X})):
        np.testing.assert_array_equal(got, X[idx], err_msg=str(idx))


def _items(dim):
    ints = st.integers(-dim, dim - 1)
    bound = st.one_of(st.none(), st.integers(-dim - 2, dim + 2))
    step = st.one_of(st.none(), st.integers(-3, 3).filter(bool))
    return st.one_of(ints, st.builds(slice, bound, bound, step))


@settings(max_examples=60, deadline=None)
@given(st.tuples(_items(4), _items(5), _items(6)), st.integers(0, 3), st.booleans())
def test_getitem_random_vs_numpy(items, cut, newaxis):
    idx = list(items[:cut]) + [Ellipsis] if cut < 3 else list(items)
    if newaxis:
        idx.insert(cut // 2, None)
    idx = tuple(idx)
    with tw.Graph().as_default():
        out = tf.constant(X)[idx]
        assert out.shape.as_list() == list(X[idx].shape)
        np.testing.assert_array_equal(run(out), X[idx])


def test_getitem_with_tensor_indices():
    x = tf.constant(X)
    i = tf.placeholder(tf.int32, [])
    j = tf.constant(np.int64(2))
    a, b, c = x[i], x[1:i, j], x[i, ..., -1]
    assert a.shape.as_list() == [5, 6] and c.shape.as_list() == [5]
    got = run([a, b, c], {i: 3})
    np.testing.assert_array_equal(got[0], X[3])
    np.testing.assert_array_equal(got[1], X[1:3, 2])
    np.testing.assert_array_equal(got[2], X[3, ..., -1])


def test_getitem_builds_one_strided_slice_with_tf_names():
    x = tf.placeholder(tf.float32, [4, 5, 6])
    y = x[1:, None, ..., -1]
    op = y.op
    assert op.name == "strided_slice" and op.type == "StridedSlice"
    assert [t.op.name for t in op.inputs[1:]] == [
        "strided_slice/stack", "strided_slice/stack_1", "strided_slice/stack_2"]
    assert op.get_attr("begin_mask") == 0 and op.get_attr("end_mask") == 1
    assert op.get_attr("new_axis_mask") == 2 and op.get_attr("ellipsis_mask") == 4
    assert op.get_attr("shrink_axis_mask") == 8
    assert y.shape.as_list() == [3, 1, 5]


def test_getitem_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="slice index 4 of dimension 0 out of bounds"):
        x[4]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[1.5]
    with pytest.raises(TypeError, match="Only integers, slices"):
        x[tf.constant([1, 2])]
    with pytest.raises(ValueError, match="Multiple ellipses"):
        x[..., 0, ...]
    p = tf.placeholder(tf.float32, [None, 5])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        run(p[3], {p: np.zeros((2, 5), np.float32)})


def test_iteration_uses_getitem():
    parts = list(tf.constant(X[:2]))
    np.testing.assert_array_equal(run(parts[1]), X[1])


def test_strided_slice_wrapper_default_strides():
    y = tf.strided_slice(tf.constant(X), [1, 0], [3, 5])
    assert y.shape.as_list() == [2, 5, 6]
    np.testing.assert_array_equal(run(y), X[1:3, 0:5])


# -- reshape and construction-time errors -----------------------------------------------------
def test_reshape_size_mismatch_fails_at_construction_naming_the_op():
    x = tf.zeros([2, 3])
    with pytest.raises(ValueError) as e:
        tf.reshape(x, [4, 2], name="my_reshape")
    msg = str(e.value)
    assert "Cannot reshape a tensor with 6 elements to shape [4,2] (8 elements)" in msg
    assert "'my_reshape'" in msg and "(op: 'Reshape')" in msg
    with pytest.raises(ValueError, match=r"6 elements to shape \[4,\?\] \(4 elements\)"):
        tf.reshape(x, [4, -1])


def test_reshape_runtime_errors_on_unknown_shapes():
    p = tf.placeholder(tf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="tensor with 6 values, but the "
                                                         "requested shape has 8"):
        run(tf.reshape(p, [4, 2]), {p: np.zeros((2, 3))})
    with pytest.raises(errors.InvalidArgumentError, match="requires a multiple of 4"):
        run(tf.reshape(p, [4, -1]), {p: np.zeros((2, 3))})
    with pytest.raises(errors.InvalidArgumentError, match="Only one input size may be -1"):
        run(tf.reshape(p, [-1, -1]), {p: np.zeros((2, 3))})


def test_shape_errors_at_construction():
    with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal.*'concat'"):
        tf.concat([tf.zeros([2, 3]), tf.zeros([3, 3])], 1)
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[1\], expected a dimension of "
                                         r"1, got 3"):
        tf.squeeze(tf.zeros([1, 3]), axis=[1])
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tf.stack([tf.zeros([2]), tf.zeros([2, 2])])
    with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
        tf.split(tf.zeros([5, 2]), 2)
    with pytest.raises(ValueError, match="dim 3 not in the interval"):
        tf.expand_dims(tf.zeros([2, 2]), 3)
    with pytest.raises(ValueError, match="Cannot infer num from shape"):
        tf.unstack(tf.placeholder(tf.float32, [None, 2]))


# -- static shapes through shape chains -------------------------------------------------------
def test_reshape_keeps_static_dims_through_shape_chains():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    s = tf.shape(x)
    assert tf.reshape(x, [s[0], -1]).shape.as_list() == [None, 12]
    assert tf.reshape(x, tf.stack([s[0], 12])).shape.as_list() == [None, 12]
    assert tf.reshape(x, tf.concat([s[:1], [-1]], 0)).shape.as_list() == [None, 12]
    assert tf.reshape(x, [-1, s[2]]).shape.as_list() == [None, 4]
    assert tf.reshape(x, [-1, s[1], 4]).shape.as_list() == [None, 3, 4]
    assert tf.reshape(x, [2, -1, 6]).shape.as_list() == [2, None, 6]
    c = tf.constant(X)
    assert tf.reshape(c, [tf.shape(c)[0], -1]).shape.as_list() == [4, 30]
    got = run(tf.reshape(x, [s[0], -1]), {x: np.zeros((5, 3, 4), np.float32)})
    assert got.shape == (5, 12)


def test_shape_slices_are_constant_when_known():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    s = apply_op("Shape", x)
    assert constant_value(s[1]) == 3
    assert constant_value(s[0]) is None
    np.testing.assert_array_equal(constant_value(s[1:]), [3, 4])
    np.testing.assert_array_equal(constant_value(tf.gather(s, [2, 1])), [4, 3])
    assert tf.range(s[1]).shape.as_list() == [3]
    assert tf.zeros([s[0], s[2]]).shape.as_list() == [None, 4]
    assert tf.fill(s, 1.0).shape.as_list() == [None, 3, 4]
    assert tf.ones_like(x).shape.as_list() == [None, 3, 4]
    assert tf.broadcast_to(tf.zeros([3]), [s[0], 3]).shape.as_list() == [None, 3]
    assert tf.tile(x, [2, s[1], 1]).shape.as_list() == [None, 9, 4]


def test_shape_size_rank_are_constants_when_static():
    x = tf.placeholder(tf.float32, [2, 3])
    for t, want in ((tf.shape(x), [2, 3]), (tf.size(x), 6), (tf.rank(x), 2)):
        assert t.op.type == "Const"
        np.testing.assert_array_equal(run(t), want)
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.shape(p).op.type == "Shape" and tf.size(p).op.type == "Size"
    assert tf.rank(tf.placeholder(tf.float32)).op.type == "Rank"
    assert tf.size(tf.placeholder(tf.float32, [None, 0])).op.type == "Const"
    s64 = tf.shape(p, out_type=tf.int64)
    assert s64.dtype == tf.int64
    got = run([s64, tf.size(p), tf.shape_n([p, x])[0]], {p: np.zeros((7, 3)),
                                                         x: np.zeros((2, 3))})
    assert got[0].tolist() == [7, 3] and got[1] == 21 and got[2].tolist() == [7, 3]


# -- where / select ---------------------------------------------------------------------------
def test_where_one_argument_gives_int64_coordinates():
    cond = np.array([[True, False], [False, True], [True, True]])
    w = tf.where(cond)
    assert w.op.type == "Where" and w.op.name == "Where" and w.dtype == tf.int64
    assert w.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(run(w), np.argwhere(cond))


def test_tf1_where_three_arguments_is_select():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    y = -x
    rows = tf.where(np.array([True, False, True]), x, y)
    assert rows.op.type == "Select" and rows.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(run(rows), np.where([[True], [False], [True]], x, y))
    cond = x > 2
    np.testing.assert_array_equal(run(tf.where(cond, x, y)), np.where(cond, x, y))
    np.testing.assert_array_equal(run(tf.where(False, x, y)), y)
    with pytest.raises(ValueError, match="x and y must both be non-None"):
        tf.where(cond, x)
    with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal"):
        tf.where(np.array([True, False]), x, y)


def test_where_v2_broadcasts():
    out = tf.where_v2(np.array([True, False, True]), np.ones((2, 3), np.int32), 0)
    assert out.op.type == "SelectV2" and out.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(run(out), [[1, 0, 1], [1, 0, 1]])


# -- one_hot ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2])
def test_one_hot_axis_variants(axis):
    idx = np.array([[0, 3, 1], [2, -1, 9]], dtype=np.int32)
    ref = (idx[..., None] == np.arange(4)).astype(np.float32) * 5 - 1
    at = 2 if axis in (None, -1) else axis
    ref = np.moveaxis(ref, -1, at)
    out = tf.one_hot(idx, 4, on_value=4.0, off_value=-1.0, axis=axis)
    assert out.shape.as_list() == list(ref.shape) and out.dtype == tf.float32
    np.testing.assert_array_equal(run(out), ref)


def test_one_hot_dtypes_and_names():
    out = tf.one_hot([1, 0], 3)
    assert out.op.name == "one_hot" and out.dtype == tf.float32
    assert [t.op.name for t in out.op.inputs[2:]] == ["one_hot/on_value", "one_hot/off_value"]
    assert tf.one_hot([1], 2, on_value=7).dtype == tf.int32
    assert tf.one_hot([1], 2, dtype=tf.int64).dtype == tf.int64
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        tf.one_hot([1], 2, on_value=1, dtype=tf.float32)
    with pytest.raises(TypeError, match="of on_value does not match dtype"):
        tf.one_hot([1], 2, on_value=1, off_value=0.0)
    np.testing.assert_array_equal(run(tf.one_hot([2, 0], 3, dtype=tf.int64)),
                                  [[0, 0, 1], [1, 0, 0]])


# -- names and Const/Fill choices -------------------------------------------------------------
def test_tf1_default_names():
    assert tf.zeros([2, 3]).op.name == "zeros" and tf.zeros([2, 3]).op.type == "Const"
    big = tf.zeros([100, 100], dtype=tf.int32, name="big")
    assert big.op.type == "Fill" and big.op.name == "big"
    assert [t.op.name for t in big.op.inputs] == ["big/shape_as_tensor", "big/Const"]
    x = tf.placeholder(tf.float32, [None, 2])
    ones = tf.ones_like(x)
    assert ones.op.type == "Fill" and ones.op.name == "ones_like"
    assert [t.op.name for t in ones.op.inputs] == ["ones_like/Shape", "ones_like/Const"]
    z = tf.zeros_like(x)
    assert z.op.type == "ZerosLike" and z.op.name == "zeros_like"
    assert tf.concat([x, x], 0).op.name == "concat"
    assert tf.stack([x, x]).op.name == "stack"
    assert tf.range(5).op.name == "range"
    t = tf.transpose(x)
    assert t.op.name == "transpose" and t.op.inputs[1].op.name == "transpose/perm"
    with tw.name_scope("outer"):
        assert tf.one_hot([1], 2).op.name == "outer/one_hot"
        assert tf.zeros([1]).op.name == "outer/zeros"


def test_concat_of_one_value_is_identity():
    x = tf.placeholder(tf.float32, [2])
    y = tf.concat([x], 0)
    assert y.op.type == "Identity" and y.op.name == "concat/concat"


# -- autopacking ------------------------------------------------------------------------------
def test_lists_with_tensors_are_packed():
    a = tf.placeholder(tf.int32, [])
    packed = tw.convert_to_tensor([a, 2, 3])
    assert packed.op.type == "Pack" and packed.op.name == "packed"
    nested = tw.convert_to_tensor([[a, 1], [2, 3]])
    assert nested.shape.as_list() == [2, 2]
    got = run([packed, nested], {a: 7})
    assert got[0].tolist() == [7, 2, 3] and got[1].tolist() == [[7, 1], [2, 3]]
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor"):
        tw.convert_to_tensor([a, tf.constant(np.int64(1))])
    as_float = tw.convert_to_tensor([a, 1.5], dtype=tf.float32)
    assert as_float.dtype == tf.float32 and as_float.op.inputs[0].op.type == "Cast"
    plain = tw.convert_to_tensor([1, 2])
    assert plain.op.type == "Const" and plain.dtype == tf.int32
    assert tw.convert_to_tensor([1, 2], preferred_dtype=tf.float32).dtype == tf.float32
    assert tw.convert_to_tensor([tw.Dimension(3), 4]).shape.as_list() == [2]


# -- identities, Print, CheckNumerics ---------------------------------------------------------
def test_print_writes_to_stderr_and_forwards(capsys):
    x = tf.constant(np.array([[1, 2], [3, 4]], np.int32))
    p = tf.Print(x, [x, tf.constant(np.array([0.5, 2.0], np.float32))], "vals: ", first_n=2,
                 summarize=3)
    assert p.op.type == "Print" and p.shape.as_list() == [2, 2]
    with tf.Session() as sess:
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(p), [[1, 2], [3, 4]])
    err = capsys.readouterr().err
    assert err.count("vals: [[1 2][3...]...][0.5 2]\n") == 2


def test_check_numerics_names_message():
    p = tf.placeholder(tf.float32, [3])
    c = tf.check_numerics(p, "bad values")
    np.testing.assert_array_equal(run(c, {p: [1, 2, 3]}), [1, 2, 3])
    for value, what in (([1, np.nan, 0], "NaN"), ([np.inf, 0, 0], "Inf"),
                        ([np.inf, np.nan, 0], "Inf and NaN")):
        with pytest.raises(errors.InvalidArgumentError,
                           match=f"bad values : Tensor had {what} values"):
            run(c, {p: value})


def test_identity_family():
    a, b = tf.constant([1, 2]), tf.constant("s")
    outs = tf.identity_n([a, b])
    assert outs[0].op.type == "IdentityN"
    got = run(outs + [tf.stop_gradient(a)])
    assert got[0].tolist() == [1, 2] and got[1] == b"s" and got[2].tolist() == [1, 2]


# -- joining, slicing, gathering --------------------------------------------------------------
def test_split_unstack_stack_concat():
    x = tf.constant(X)
    parts = tf.split(x, [1, -1, 2], axis=2)
    assert [p.shape.as_list() for p in parts] == [[4, 5, 1], [4, 5, 3], [4, 5, 2]]
    equal = tf.split(x, 2, axis=0)
    rows = tf.unstack(x, axis=1)
    assert len(rows) == 5 and rows[0].shape.as_list() == [4, 6]
    back = tf.stack(rows, axis=1)
    joined = tf.concat(parts, axis=-1)
    got = run([parts, equal, back, joined])
    np.testing.assert_array_equal(got[0][1], X[:, :, 1:4])
    np.testing.assert_array_equal(got[1][1], X[2:])
    np.testing.assert_array_equal(got[2], X)
    np.testing.assert_array_equal(got[3], X)
    with pytest.raises(ValueError, match=r"axis = 4 not in \[-4, 4\)"):
        tf.stack([x, x], axis=4)


def test_pad_modes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    pads = [[1, 1], [2, 0]]
    cases = [(tf.pad(x, pads), np.pad(x, pads)),
             (tf.pad(x, pads, constant_values=9), np.pad(x, pads, constant_values=9)),
             (tf.pad(x, pads, mode="reflect"), np.pad(x, pads, mode="reflect")),
             (tf.pad(x, pads, mode="SYMMETRIC"), np.pad(x, pads, mode="symmetric"))]
    assert [c[0].op.type for c in cases] == ["Pad", "PadV2", "MirrorPad", "MirrorPad"]
    for (t, want), got in zip(cases, run([c[0] for c in cases])):
        assert t.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="Unknown padding mode"):
        tf.pad(x, pads, mode="wrap")
    with pytest.raises(errors.InvalidArgumentError, match="paddings must be less than"):
        run(tf.pad(x, [[2, 0], [0, 0]], mode="REFLECT"))


def test_transpose_reverse_tile_broadcast():
    x = tf.constant(X)
    c = tf.constant((np.arange(4) + 1j).astype(np.complex64).reshape(2, 2))
    unknown = tf.placeholder(tf.float32)
    outs = [tf.transpose(x), tf.transpose(x, [1, 0, 2]), tf.transpose(c, conjugate=True),
            tf.reverse(x, [-1, 0]), tf.tile(x[:1], [2, 1, 1]),
            tf.broadcast_to(x[:, :1], [4, 3, 6]), tf.transpose(unknown)]
    assert outs[0].shape.as_list() == [6, 5, 4]
    got = run(outs, {unknown: X})
    np.testing.assert_array_equal(got[0], X.T)
    np.testing.assert_array_equal(got[1], X.transpose(1, 0, 2))
    np.testing.assert_array_equal(got[2], np.conj(run(c).T))
    np.testing.assert_array_equal(got[3], X[::-1, :, ::-1])
    np.testing.assert_array_equal(got[4], np.tile(X[:1], [2, 1, 1]))
    np.testing.assert_array_equal(got[5], np.broadcast_to(X[:, :1], (4, 3, 6)))
    np.testing.assert_array_equal(got[6], X.T)


def test_gather_variants():
    x = tf.constant(X)
    g0 = tf.gather(x, [3, 1])
    g1 = tf.gather(x, [[0, 4]], axis=1)
    gb = tf.gather(x, [[1, 0], [2, 2], [0, 0], [5, 1]], axis=2, batch_dims=1)
    assert g0.op.type == "GatherV2" and g0.op.name == "GatherV2"
    assert g1.shape.as_list() == [4, 1, 2, 6] and gb.shape.as_list() == [4, 5, 2]
    nd = tf.gather_nd(x, [[0, 1], [3, 4]])
    got = run([g0, g1, gb, nd])
    np.testing.assert_array_equal(got[0], X[[3, 1]])
    np.testing.assert_array_equal(got[1], X[:, [[0, 4]]])
    want = np.stack([X[i][:, j] for i, j in enumerate([[1, 0], [2, 2], [0, 0], [5, 1]])])
    np.testing.assert_array_equal(got[2], want)
    np.testing.assert_array_equal(got[3], np.stack([X[0, 1], X[3, 4]]))
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 7 is not in "
                                                         r"\[0, 4\)"):
        run(tf.gather(x, tf.constant([0, 7])))


def test_scatter_nd_sums_duplicates():
    out = tf.scatter_nd([[0], [2], [0]], [1.0, 2.0, 3.0], [4])
    assert out.shape.as_list() == [4]
    np.testing.assert_array_equal(run(out), [4, 0, 2, 0])


def test_boolean_mask():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    m1, m2 = np.array([True, False, True]), x % 3 == 0
    cols = np.array([False, True, True, False])
    outs = [tf.boolean_mask(x, m1), tf.boolean_mask(x, m2), tf.boolean_mask(x, cols, axis=1),
            tf.constant(x)[tf.constant(m1)]]
    assert outs[0].shape.as_list() == [None, 4] and outs[2].shape.as_list() == [3, None]
    got = run(outs)
    np.testing.assert_array_equal(got[0], x[m1])
    np.testing.assert_array_equal(got[1], x[m2])
    np.testing.assert_array_equal(got[2], x[:, cols])
    np.testing.assert_array_equal(got[3], x[m1])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(x, True)


def test_unique_setdiff_invert_permutation():
    y, idx = tf.unique([3, 1, 3, 2, 1])
    out, pos = tf.setdiff1d([5, 1, 4, 1, 2], [1, 2])
    inv = tf.invert_permutation([2, 0, 1])
    got = run([y, idx, out, pos, inv])
    assert got[0].tolist() == [3, 1, 2] and got[1].tolist() == [0, 1, 0, 2, 1]
    assert got[2].tolist() == [5, 4] and got[3].tolist() == [0, 2]
    assert got[4].tolist() == [1, 2, 0]
    with pytest.raises(errors.InvalidArgumentError, match="1 is duplicated"):
        run(tf.invert_permutation(tf.constant([1, 1, 0])))


# -- creation ---------------------------------------------------------------------------------
def test_zeros_ones_fill_range():
    outs = [tf.zeros([2, 3], tf.int64), tf.ones([2], tf.bool), tf.zeros([3], tf.string),
            tf.fill([2, 2], 7), tf.range(5), tf.range(1, 2, 0.25), tf.range(10, 1, -3),
            tf.range(tf.constant(3, tf.int64)), tf.ones(tf.constant([1, 2]))]
    assert [o.dtype for o in outs] == [tf.int64, tf.bool, tf.string, tf.int32, tf.int32,
                                       tf.float32, tf.int32, tf.int64, tf.float32]
    assert outs[5].shape.as_list() == [4] and outs[6].shape.as_list() == [3]
    got = run(outs)
    assert got[0].tolist() == [[0] * 3] * 2 and got[1].tolist() == [True, True]
    assert got[2].tolist() == [b""] * 3 and got[3].tolist() == [[7, 7], [7, 7]]
    assert got[4].tolist() == [0, 1, 2, 3, 4] and got[5].tolist() == [1, 1.25, 1.5, 1.75]
    assert got[6].tolist() == [10, 7, 4] and got[7].tolist() == [0, 1, 2]
    assert got[8].tolist() == [[1, 1]]
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0"):
        tf.range(5, 1)


def test_meshgrid_matches_numpy():
    a, b = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32)
    for indexing in ("xy", "ij"):
        xs = tf.meshgrid(a, b, indexing=indexing)
        for got, want in zip(run(xs), np.meshgrid(a, b, indexing=indexing)):
            np.testing.assert_array_equal(got, want)


def test_sequence_mask():
    pytest.importorskip("tensorweave.ops.reduction_ops")  # registers Max
    from tensorweave.ops.registry import OPS

    if not all(t in OPS for t in ("Less", "Max", "Maximum", "Cast")):
        pytest.skip("math family not registered")
    m = tf.sequence_mask([1, 3, 0], 4)
    assert m.dtype == tf.bool and m.shape.as_list() == [3, 4]
    got = run([m, tf.sequence_mask([2, 1], dtype=tf.float32)])
    assert got[0].tolist() == [[True, False, False, False], [True, True, True, False],
                               [False] * 4]
    assert got[1].tolist() == [[1.0, 1.0], [1.0, 0.0]]


def test_diag_band_and_misc():
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    outs = [tf.diag([1, 2]), tf.diag_part(np.eye(3, dtype=np.float32) * 2),
            tf.matrix_diag([[1, 2]]), tf.matrix_diag_part(m), tf.matrix_band_part(m, 0, 1),
            tf.squeeze(tf.zeros([1, 2, 1])), tf.expand_dims(m, dim=0),
            tf.bitcast(tf.constant(1.0), tf.int32),
            tf.depth_to_space(tf.space_to_depth(tf.constant(X.reshape(1, 4, 10, 3)), 2), 2)]
    assert outs[4].op.inputs[1].dtype == tf.int64
    got = run(outs)
    assert got[0].tolist() == [[1, 0], [0, 2]] and got[1].tolist() == [2, 2, 2]
    assert got[2].tolist() == [[[1, 0], [0, 2]]] and got[3].tolist() == [0, 5, 10]
    np.testing.assert_array_equal(got[4], np.triu(np.tril(m, 1)))
    assert got[5].shape == (2,) and got[6].shape == (1, 3, 4)
    assert got[7] == np.float32(1.0).view(np.int32)
    np.testing.assert_array_equal(got[8], X.reshape(1, 4, 10, 3))
