"""The nn family beyond the harness: backprop kernels against finite differences of their
forward kernels, TF's routing and statistics conventions, errors at construction and at run
time, the `tf.nn` wrappers' names and argument handling, and the composite functions."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import dtypes, errors
from tensorweave.ops import nn_conv, nn_impl, nn_losses, nn_norm, nn_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import NO_DEFAULT, OPS
from tensorweave.runtime.kernels.registry import KernelNode, has_kernel, lookup_kernel
from tests.ops import cases_nn  # noqa: F401  (registers the family's ops and kernels)
from tests.ops import nn_reference as ref

rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float64, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def needs(*op_types):
    """Skips a test of a composite until the other families' ops it uses exist."""
    missing = [o for o in op_types if o not in OPS or not has_kernel(o)]
    if missing:
        pytest.skip(f"needs ops of other families that are not registered yet: {missing}")


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- kernels called directly --------------------------------------------------------------------
def kernel(op_type, out_dtypes, **attrs):
    """The CPU kernel of `op_type` with `attrs` (defaults filled in as apply_op does)."""
    op_def = OPS.lookup(op_type)
    full = {a.name: a.default for a in op_def.attrs.values() if a.default is not NO_DEFAULT}
    full.update(attrs)
    outs = [dtypes.as_dtype(d) for d in out_dtypes]
    node = KernelNode(f"test_{op_type}", op_type, full, [], outs, op_def=op_def)
    return lookup_kernel(op_type).factory(node)


def numeric_vjp(f, x, dy, eps=1e-6):
    """d<dy, f(x)>/dx by central differences (float64)."""
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        grad[i] = np.sum(dy * (np.asarray(f(xp), np.float64) - np.asarray(f(xm), np.float64)))
    return grad / (2 * eps)


CONV_GRAD_CONFIGS = [
    dict(strides=[1, 1, 1, 1], padding="SAME"),
    dict(strides=[1, 2, 2, 1], padding="SAME"),
    dict(strides=[1, 2, 1, 1], padding="VALID"),
    dict(strides=[1, 1, 1, 1], padding="VALID", dilations=[1, 2, 2, 1]),
    dict(strides=[1, 1, 2, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 2, 1, 0, 1, 0, 0]),
    dict(strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW"),
]


@pytest.mark.parametrize("attrs", CONV_GRAD_CONFIGS, ids=lambda a: "-".join(
    str(v) for v in a.values()))
def test_conv2d_backprops_match_finite_differences(attrs):
    nchw = attrs.get("data_format") == "NCHW"
    x = rand(2, 3, 6, 5) if nchw else rand(2, 6, 5, 3)
    w = rand(3, 2, 3, 2)
    f64 = ["float64"]
    conv = kernel("Conv2D", f64, **attrs)
    y = conv(x, w)
    dy = rand(*y.shape)
    dx = kernel("Conv2DBackpropInput", f64, **attrs)(np.array(x.shape, np.int32), w, dy)
    dw = kernel("Conv2DBackpropFilter", f64, **attrs)(x, np.array(w.shape, np.int32), dy)
    np.testing.assert_allclose(dx, numeric_vjp(lambda v: conv(v, w), x, dy), atol=1e-7)
    np.testing.assert_allclose(dw, numeric_vjp(lambda v: conv(x, v), w, dy), atol=1e-7)


def test_grouped_conv2d_backprops_match_finite_differences():
    x, w = rand(1, 4, 3, 4), rand(2, 2, 2, 6)
    attrs = {"strides": [1, 1, 1, 1], "padding": "SAME"}
    conv = kernel("Conv2D", ["float64"], **attrs)
    dy = rand(*conv(x, w).shape)
    dx = kernel("Conv2DBackpropInput", ["float64"], **attrs)(np.array(x.shape), w, dy)
    dw = kernel("Conv2DBackpropFilter", ["float64"], **attrs)(x, np.array(w.shape), dy)
    np.testing.assert_allclose(dx, numeric_vjp(lambda v: conv(v, w), x, dy), atol=1e-7)
    np.testing.assert_allclose(dw, numeric_vjp(lambda v: conv(x, v), w, dy), atol=1e-7)


@pytest.mark.parametrize("attrs", CONV_GRAD_CONFIGS[:4] + CONV_GRAD_CONFIGS[5:],
                         ids=lambda a: "-".join(str(v) for v in a.values()))
def test_depthwise_backprops_match_finite_differences(attrs):
    nchw = attrs.get("data_format") == "NCHW"
    x = rand(2, 3, 6, 5) if nchw else rand(2, 6, 5, 3)
    f = rand(2, 3, 3, 2)
    fwd = kernel("DepthwiseConv2dNative", ["float64"], **attrs)
    dy = rand(*fwd(x, f).shape)
    dx = kernel("DepthwiseConv2dNativeBackpropInput", ["float64"], **attrs)(
        np.array(x.shape, np.int32), f, dy)
    df = kernel("DepthwiseConv2dNativeBackpropFilter", ["float64"], **attrs)(
        x, np.array(f.shape, np.int32), dy)
    np.testing.assert_allclose(dx, numeric_vjp(lambda v: fwd(v, f), x, dy), atol=1e-7)
    np.testing.assert_allclose(df, numeric_vjp(lambda v: fwd(x, v), f, dy), atol=1e-7)


POOL_GRAD_CONFIGS = [
    dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
    dict(ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME"),
    dict(ksize=[1, 2, 3, 1], strides=[1, 1, 1, 1], padding="SAME"),
    dict(ksize=[1, 1, 3, 3], strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW"),
]


@pytest.mark.parametrize("attrs", POOL_GRAD_CONFIGS, ids=lambda a: "-".join(
    str(v) for v in a.values()))
def test_pool_grads_match_finite_differences(attrs):
    nchw = attrs.get("data_format") == "NCHW"
    shape = (2, 3, 5, 7) if nchw else (2, 5, 7, 3)
    # distinct values spaced far more than the step, so no window's argmax moves
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float64) * 0.01
    max_pool = kernel("MaxPool", ["float64"], **attrs)
    avg_pool = kernel("AvgPool", ["float64"], **attrs)
    y = max_pool(x)
    dy = rand(*y.shape)
    dx = kernel("MaxPoolGrad", ["float64"], **attrs)(x, y, dy)
    np.testing.assert_allclose(dx, numeric_vjp(max_pool, x, dy), atol=1e-7)
    da = kernel("AvgPoolGrad", ["float64"], **attrs)(np.array(shape, np.int32), dy)
    np.testing.assert_allclose(da, numeric_vjp(avg_pool, x, dy), atol=1e-7)


ACTIVATION_GRADS = [
    ("Relu", "ReluGrad", "features", {}),
    ("Relu6", "Relu6Grad", "features", {}),
    ("Elu", "EluGrad", "outputs", {}),
    ("Selu", "SeluGrad", "outputs", {}),
    ("Softplus", "SoftplusGrad", "features", {}),
    ("Softsign", "SoftsignGrad", "features", {}),
    ("LeakyRelu", "LeakyReluGrad", "features", {"alpha": 0.3}),
]


@pytest.mark.parametrize("fwd_op,grad_op,second,attrs", ACTIVATION_GRADS,
                         ids=[a[1] for a in ACTIVATION_GRADS])
def test_activation_grads_match_finite_differences(fwd_op, grad_op, second, attrs):
    x = rand(3, 4, low=-8, high=8)
    x[np.abs(x) < 1e-3] = 0.5            # keep away from kinks
    x[np.abs(x - 6) < 1e-3] = 5.0
    fwd = kernel(fwd_op, ["float64"], **attrs)
    dy = rand(3, 4)
    other = x if second == "features" else fwd(x)
    got = kernel(grad_op, ["float64"], **attrs)(dy, other)
    np.testing.assert_allclose(got, numeric_vjp(fwd, x, dy), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_bias_add_grad_matches_finite_differences(fmt):
    x = rand(2, 3, 4, 5)
    b = rand(5 if fmt == "NHWC" else 3)
    fwd = kernel("BiasAdd", ["float64"], data_format=fmt)
    dy = rand(*x.shape)
    got = kernel("BiasAddGrad", ["float64"], data_format=fmt)(dy)
    np.testing.assert_allclose(got, numeric_vjp(lambda v: fwd(x, v), b, dy), atol=1e-8)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_grad_matches_finite_differences(training, fmt):
    # float32 kernels: small inputs and a large step keep the differences meaningful
    x = rand(2, 3, 2, 3, dtype=np.float32, low=-2, high=2)
    c = 3
    scale, offset = rand(c, dtype=np.float32, low=0.5), rand(c, dtype=np.float32)
    mean, var = rand(c, dtype=np.float32), rand(c, dtype=np.float32, low=0.5)
    attrs = {"is_training": training, "epsilon": 0.01, "data_format": fmt}
    fwd = kernel("FusedBatchNormV3", ["float32"] * 6, **attrs)
    outs = fwd(x, scale, offset, mean, var)
    dy = rand(*x.shape, dtype=np.float32)
    dx, dscale, doffset, _, _ = kernel("FusedBatchNormGradV3", ["float32"] * 5, **attrs)(
        dy, x, scale, outs[3], outs[4], outs[5])

    def y_of(x_=x, s=scale, o=offset):
        return fwd(x_.astype(np.float32), s.astype(np.float32), o.astype(np.float32), mean,
                   var)[0]

    tol = {"rtol": 2e-2, "atol": 2e-2}
    np.testing.assert_allclose(dx, numeric_vjp(lambda v: y_of(x_=v), x.astype(np.float64), dy,
                                               eps=1e-2), **tol)
    np.testing.assert_allclose(dscale, numeric_vjp(lambda v: y_of(s=v), scale.astype(
        np.float64), dy, eps=1e-2), **tol)
    np.testing.assert_allclose(doffset, numeric_vjp(lambda v: y_of(o=v), offset.astype(
        np.float64), dy, eps=1e-2), **tol)


def test_lrn_grad_matches_finite_differences():
    attrs = {"depth_radius": 2, "bias": 1.0, "alpha": 0.5, "beta": 0.75}
    x = rand(1, 2, 3, 6, dtype=np.float32)
    fwd = kernel("LRN", ["float32"], **attrs)
    dy = rand(*x.shape, dtype=np.float32)
    got = kernel("LRNGrad", ["float32"], **attrs)(dy, x, fwd(x))
    want = numeric_vjp(lambda v: fwd(v.astype(np.float32)), x.astype(np.float64), dy, eps=1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-3)


def test_cross_entropy_backprops_are_gradients_of_the_loss():
    logits, labels = rand(3, 5), ref.softmax(rand(3, 5))
    sparse = np.array([4, 0, 2])
    dense = kernel("SoftmaxCrossEntropyWithLogits", ["float64"] * 2)
    sparse_k = kernel("SparseSoftmaxCrossEntropyWithLogits", ["float64"] * 2)
    ones = np.ones(3)
    np.testing.assert_allclose(dense(logits, labels)[1],
                               numeric_vjp(lambda v: dense(v, labels)[0], logits, ones),
                               atol=1e-7)
    np.testing.assert_allclose(sparse_k(logits, sparse)[1],
                               numeric_vjp(lambda v: sparse_k(v, sparse)[0], logits, ones),
                               atol=1e-7)


# -- TF conventions -----------------------------------------------------------------------------
def test_max_pool_grad_routes_ties_to_the_first_max():
    x = np.array([[5, 5, 1, 7], [5, 2, 7, 7]], np.float32).reshape(1, 2, 4, 1)
    y = nn_conv.max_pool(x, 2, 2, "VALID")
    dx = apply_op("MaxPoolGrad", x, y, np.array([10, 20], np.float32).reshape(1, 1, 2, 1),
                  ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    got = run(dx).reshape(2, 4)
    np.testing.assert_array_equal(got, [[10, 0, 0, 20], [0, 0, 0, 0]])


def test_overlapping_max_pool_grad_accumulates():
    x = np.array([1, 9, 2, 3, 0], np.float32).reshape(1, 1, 5, 1)
    dx = apply_op("MaxPoolGrad", x, np.array([9, 9, 3], np.float32).reshape(1, 1, 3, 1),
                  np.array([1, 2, 4], np.float32).reshape(1, 1, 3, 1),
                  ksize=[1, 1, 3, 1], strides=[1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(run(dx).reshape(-1), [0, 3, 0, 4, 0])


def test_avg_pool_same_excludes_padding():
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    y = run(nn_conv.avg_pool(x, 2, 2, "SAME")).reshape(2, 2)
    np.testing.assert_allclose(y, [[(1 + 2 + 4 + 5) / 4, (3 + 6) / 2], [(7 + 8) / 2, 9]])


def test_fused_batch_norm_outputs_unbiased_variance_and_blends_running_stats():
    x = rand(4, 3, 2, 2, dtype=np.float32)
    scale, offset = np.ones(2, np.float32), np.zeros(2, np.float32)
    n = 4 * 3 * 2
    y, mean, var = run(nn_norm.fused_batch_norm(x, scale, offset, epsilon=1e-3))
    xs = x.reshape(-1, 2).astype(np.float64)
    np.testing.assert_allclose(var, xs.var(0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(mean, xs.mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(y.reshape(-1, 2), (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 1e-3),
                               rtol=1e-4, atol=1e-5)
    run_mean, run_var = np.full(2, 10, np.float32), np.full(2, 3, np.float32)
    _, mean, var = run(nn_norm.fused_batch_norm(x, scale, offset, run_mean, run_var,
                                                exponential_avg_factor=0.1))
    np.testing.assert_allclose(mean, 0.9 * 10 + 0.1 * xs.mean(0), rtol=1e-5)
    np.testing.assert_allclose(var, 0.9 * 3 + 0.1 * xs.var(0) * n / (n - 1), rtol=1e-5)


def test_fused_batch_norm_inference_uses_given_statistics():
    x = rand(2, 2, 2, 3, dtype=np.float32)
    mean, var = np.array([1, 2, 3], np.float32), np.array([4, 1, 0.25], np.float32)
    y, m, v = run(nn_norm.fused_batch_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32),
                                           mean, var, epsilon=0.0, is_training=False))
    np.testing.assert_allclose(y, (x - mean) / np.sqrt(var), rtol=1e-5)
    np.testing.assert_array_equal(m, mean)
    np.testing.assert_array_equal(v, var)


def test_top_k_orders_ties_by_lower_index_and_in_top_k_counts_ties_as_in():
    x = np.array([[1, 3, 3, 2, 3]], np.float32)
    values, indices = run(nn_ops.top_k(x, 3))
    np.testing.assert_array_equal(indices, [[1, 2, 4]])
    np.testing.assert_array_equal(values, [[3, 3, 3]])
    pred = np.array([[0.1, 0.5, 0.5, 0.2], [0.1, np.nan, 0.9, 0.2]], np.float32)
    got = run(nn_ops.in_top_k(pred, np.array([2, 2]), 1))
    np.testing.assert_array_equal(got, [True, False])  # tie counts as in; NaN row says no


def test_softmax_is_stable_for_large_logits():
    x = np.array([[1000.0, 1000.0, -1000.0]], np.float32)
    np.testing.assert_allclose(run(nn_ops.softmax(x)), [[0.5, 0.5, 0.0]])
    want = [[-np.log(2), -np.log(2), -2000 - np.log(2)]]
    np.testing.assert_allclose(run(nn_ops.log_softmax(x)), want, rtol=1e-6)


def test_float32_kernels_keep_float32():
    x = rand(2, 5, 7, 3, dtype=np.float32)
    w = rand(3, 3, 3, 4, dtype=np.float32)
    outs = run([nn_conv.conv2d(x, w, 1, "SAME"), nn_conv.max_pool(x, 2, 2, "SAME"),
                nn_ops.selu(x), nn_ops.softplus(x), nn_ops.l2_loss(x),
                nn_norm.fused_batch_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32))[0]])
    assert [np.asarray(o).dtype for o in outs] == [np.float32] * 6


# -- errors -------------------------------------------------------------------------------------
def test_conv2d_channel_mismatch_fails_at_construction_naming_conv2d():
    with pytest.raises(ValueError, match=r"Depth of input \(3\) is not a multiple of input "
                                         r"depth of filter \(4\).*'Conv2D'.*\[2,5,7,3\]"):
        nn_conv.conv2d(np.zeros((2, 5, 7, 3), np.float32), np.zeros((3, 3, 4, 8), np.float32),
                       1, "SAME")


@pytest.mark.parametrize("build,message", [
    (lambda: nn_conv.conv2d(np.zeros((2, 2, 7, 4), np.float32),
                            np.zeros((3, 3, 4, 8), np.float32), 1, "VALID"),
     "Negative dimension size caused by subtracting 3 from 2"),
    (lambda: nn_conv.conv2d(np.zeros((2, 5, 7), np.float32),
                            np.zeros((3, 3, 4, 8), np.float32), 1, "SAME"),
     "Shape must be rank 4 but is rank 3"),
    (lambda: apply_op("Conv2D", np.zeros((1, 4, 4, 1), np.float32),
                      np.zeros((2, 2, 1, 1), np.float32), strides=[1, 1, 1], padding="SAME"),
     "Conv2D requires the stride attribute to contain 4 values, but got: 3"),
    (lambda: apply_op("Conv2D", np.zeros((1, 4, 4, 1), np.float32),
                      np.zeros((2, 2, 1, 1), np.float32), strides=[2, 1, 1, 1], padding="SAME"),
     "does not yet support strides in the batch"),
    (lambda: nn_conv.conv2d(np.zeros((1, 4, 4, 1), np.float32),
                            np.zeros((2, 2, 1, 1), np.float32), 1,
                            [[1, 0], [1, 1], [0, 0], [0, 0]]),
     "Nonzero explicit padding in the batch or depth dimensions is not supported"),
    (lambda: nn_conv.conv2d(np.zeros((1, 4, 4, 1), np.float32),
                            np.zeros((2, 2, 1, 1), np.float32), 1, "EXPLICIT"),
     '"EXPLICIT" is not a valid value for `padding`'),
    (lambda: nn_conv.conv2d(np.zeros((1, 4, 4, 1), np.float32),
                            np.zeros((2, 2, 1, 1), np.float32), [1, 2, 3], "SAME"),
     "strides should be of length 1, 2 or 4"),
    (lambda: nn_ops.bias_add(np.zeros((2, 2, 7, 4), np.float32), np.zeros(3, np.float32)),
     r"Dimensions must be equal, but are 4 and 3 for 'BiasAdd' \(op: 'BiasAdd'\)"),
    (lambda: nn_conv.max_pool(np.zeros((1, 4, 4, 1), np.float32), [1, 0, 2, 1], 2, "SAME"),
     "`ksize` cannot be zero"),
    (lambda: nn_ops.top_k(np.zeros((2, 3), np.float32), 4),
     "input must have last dimension >= k = 4 but is 3"),
    (lambda: nn_ops.softmax(np.float32(1.0)), "Shape must be at least rank 1 but is rank 0"),
    (lambda: nn_losses.sparse_softmax_cross_entropy_with_logits(
        labels=np.zeros((2, 1), np.int32), logits=np.zeros((2, 3), np.float32)),
     "`labels.shape.rank` must equal `logits.shape.rank - 1`"),
    (lambda: apply_op("SparseSoftmaxCrossEntropyWithLogits", np.zeros((4, 3), np.float32),
                      np.zeros(3, np.int32)), "Dimensions must be equal, but are 4 and 3"),
    (lambda: apply_op("SoftmaxCrossEntropyWithLogits", np.zeros((4, 3), np.float32),
                      np.zeros((2, 3), np.float32)), "Dimensions must be equal"),
    (lambda: nn_norm.fused_batch_norm(np.zeros((1, 2, 2, 3), np.float32),
                                      np.ones(4, np.float32), np.zeros(4, np.float32)),
     "Dimensions must be equal, but are 3 and 4"),
    (lambda: nn_norm.fused_batch_norm(np.zeros((1, 2, 2, 3), np.float32),
                                      np.ones(3, np.float32), np.zeros(3, np.float32),
                                      is_training=False),
     "Both `mean` and `variance` must be a 1D tensor"),
    (lambda: nn_conv.conv2d_transpose(np.zeros((1, 4, 4, 5), np.float32),
                                      np.zeros((3, 3, 2, 4), np.float32), [1, 4, 4, 2], 1),
     "input channels does not match filter's input channels, 5 != 4"),
    (lambda: apply_op("LRN", np.zeros((2, 3), np.float32)), "Shape must be rank 4 but is rank 2"),
])
def test_errors_at_construction(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_out_of_range_label_fails_naming_the_label():
    logits = tf.placeholder(tf.float32, [None, 3])
    loss = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=[1, 5], logits=logits)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Received a label value of 5 which is outside the valid range of "
                             r"\[0, 3\)\.  Label values: 1 5"):
        run(loss, {logits: np.zeros((2, 3), np.float32)})


def test_runtime_shape_errors_are_invalid_argument():
    x, w, k = tf.placeholder(tf.float32), tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    conv = nn_conv.conv2d(x, w, 1, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="evenly divisible by filter depth"):
        run(conv, {x: np.zeros((1, 4, 4, 3), np.float32), w: np.zeros((2, 2, 2, 1), np.float32)})
    top = nn_ops.top_k(x, k)
    with pytest.raises(errors.InvalidArgumentError, match="Had 3, needed 4"):
        run(top, {x: np.zeros((2, 3), np.float32), k: 4})
    bias = nn_ops.bias_add(x, w)
    with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
        run(bias, {x: np.zeros((2, 3), np.float32), w: np.zeros(1, np.float32)})


# -- wrappers: names and arguments --------------------------------------------------------------
def test_wrappers_use_tf_op_names():
    x = tf.placeholder(tf.float32, [2, 5, 7, 3], name="x")
    w = tf.placeholder(tf.float32, [3, 3, 3, 4], name="w")
    names = [
        nn_conv.conv2d(x, w, 1, "SAME"), nn_conv.conv2d(x, filters=w, strides=1, padding="SAME"),
        nn_conv.max_pool(x, 2, 2, "SAME"), nn_conv.max_pool2d(x, 2, 2, "SAME"),
        nn_conv.avg_pool(x, 2, 2, "VALID"), nn_ops.relu(x), nn_ops.relu6(x),
        nn_ops.leaky_relu(x), nn_ops.elu(x), nn_ops.selu(x), nn_ops.softplus(x),
        nn_ops.softsign(x), nn_ops.softmax(x), nn_ops.log_softmax(x), nn_ops.l2_loss(x),
        nn_ops.lrn(x), nn_ops.bias_add(x, tf.placeholder(tf.float32, [3], name="b")),
        nn_conv.depthwise_conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 2]), [1, 1, 1, 1],
                                 "SAME"),
        nn_conv.conv2d_transpose(tf.placeholder(tf.float32, [2, 5, 7, 4]), w, [2, 5, 7, 3],
                                 [1, 1, 1, 1]),
        nn_norm.fused_batch_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32))[0],
    ]
    assert [t.op.name for t in names] == [
        "Conv2D", "Conv2D_1", "MaxPool", "MaxPool2d", "AvgPool", "Relu", "Relu6", "LeakyRelu",
        "Elu", "Selu", "Softplus", "Softsign", "Softmax", "LogSoftmax", "L2Loss", "LRN",
        "BiasAdd", "depthwise", "conv2d_transpose", "FusedBatchNormV3"]


def test_wrapper_literal_inputs_are_named_under_the_op():
    out = nn_ops.bias_add(np.ones((2, 3), np.float32), [1.0, 2.0, 3.0])
    assert out.op.name == "BiasAdd"
    assert [t.op.name for t in out.op.inputs] == ["BiasAdd/input", "BiasAdd/bias"]
    t = nn_conv.conv2d_transpose(tf.placeholder(tf.float32, [1, 4, 4, 2]),
                                 tf.placeholder(tf.float32, [3, 3, 1, 2]), [1, 4, 4, 1], 1)
    assert t.op.inputs[0].op.name == "conv2d_transpose/input_sizes"


def test_loss_wrappers_use_tf_names():
    logits = tf.placeholder(tf.float32, [4, 3])
    sparse = nn_losses.sparse_softmax_cross_entropy_with_logits(
        labels=tf.placeholder(tf.int32, [4]), logits=logits)
    dense = nn_losses.softmax_cross_entropy_with_logits_v2(
        labels=tf.placeholder(tf.float32, [4, 3]), logits=logits)
    top = nn_ops.top_k(logits, 2)
    in_top = nn_ops.in_top_k(logits, tf.placeholder(tf.int32, [4]), 2)
    assert sparse.op.name == \
        "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
    assert dense.op.name == "softmax_cross_entropy_with_logits"
    assert (top.values.op.name, top.indices.dtype) == ("TopKV2", tf.int32)
    assert in_top.op.name == "in_top_k/InTopKV2"
    assert sparse.shape.as_list() == [4] and dense.shape.as_list() == [4]


def test_conv2d_argument_forms_reach_the_op():
    x = tf.placeholder(tf.float32, [2, 3, 5, 7], name="x")
    w = tf.placeholder(tf.float32, [3, 3, 3, 4], name="w")
    y = nn_conv.conv2d(x, w, strides=2, padding=[[0, 0], [0, 0], [1, 1], [2, 0]],
                       data_format="NCHW", dilations=[1, 1])
    assert y.op.get_attr("strides") == [1, 1, 2, 2]
    assert y.op.get_attr("padding") == b"EXPLICIT"
    assert y.op.get_attr("explicit_paddings") == [0, 0, 0, 0, 1, 1, 2, 0]
    assert y.shape.as_list() == [2, 4, 3, 4]
    p = nn_conv.max_pool(tf.placeholder(tf.float32, [2, 5, 7, 3]), [2, 3], [1, 2], "SAME")
    assert (p.op.get_attr("ksize"), p.op.get_attr("strides")) == ([1, 2, 3, 1], [1, 1, 2, 1])
    assert p.shape.as_list() == [2, 5, 4, 3]


def test_conv2d_transpose_inverts_the_shape_of_a_strided_conv():
    x = rand(2, 4, 6, 3, dtype=np.float32)
    w = rand(3, 3, 5, 3, dtype=np.float32)   # (kh, kw, out_channels, in_channels)
    y = nn_conv.conv2d_transpose(x, w, [2, 8, 11, 5], [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [2, 8, 11, 5]
    got = run(y)
    want = ref.conv2d_backprop_input((2, 8, 11, 5), w, x, [1, 2, 2, 1], "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_separable_conv2d_is_depthwise_then_pointwise():
    x = rand(1, 5, 6, 2, dtype=np.float32)
    dw, pw = rand(3, 3, 2, 2, dtype=np.float32), rand(1, 1, 4, 3, dtype=np.float32)
    out = nn_conv.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME")
    assert out.op.name == "separable_conv2d"
    assert out.op.inputs[0].op.name == "separable_conv2d/depthwise"
    depth = ref.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME")
    want = ref.conv2d(depth, pw, [1, 1, 1, 1], "VALID")
    np.testing.assert_allclose(run(out), want, rtol=1e-4, atol=1e-5)


def test_depthwise_conv2d_rate_is_a_dilation():
    x = rand(1, 7, 7, 2, dtype=np.float32)
    f = rand(3, 3, 2, 1, dtype=np.float32)
    out = nn_conv.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", rate=[2, 2])
    want = ref.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME", [1, 2, 2, 1])
    np.testing.assert_allclose(run(out), want, rtol=1e-4, atol=1e-5)


# -- composites (use other families' ops) --------------------------------------------------------
def test_softmax_over_another_axis():
    needs("Transpose")
    x = rand(2, 3, 4, dtype=np.float32)
    out = nn_ops.softmax(x, axis=1)
    assert out.shape.as_list() == [2, 3, 4]
    np.testing.assert_allclose(run(out), ref.softmax(x, axis=1), rtol=1e-5)


def test_softmax_cross_entropy_v2_on_3d_logits_and_other_axis():
    needs("Reshape", "Transpose")
    logits, labels = rand(2, 3, 4, dtype=np.float32), ref.softmax(rand(2, 3, 4)).astype(
        np.float32)
    loss = nn_losses.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    want = -(labels * ref.log_softmax(logits)).sum(-1)
    np.testing.assert_allclose(run(loss), want, rtol=1e-5)
    loss0 = nn_losses.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=0)
    want0 = -(labels * ref.log_softmax(logits, axis=0)).sum(0)
    np.testing.assert_allclose(run(loss0), want0, rtol=1e-5)


def test_softmax_cross_entropy_v1_stops_gradients_into_labels():
    needs("StopGradient")
    logits, labels = rand(4, 3, dtype=np.float32), ref.softmax(rand(4, 3)).astype(np.float32)
    loss = nn_losses.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.op.inputs[1].op.type == "StopGradient"
    np.testing.assert_allclose(run(loss), -(labels * ref.log_softmax(logits)).sum(-1),
                               rtol=1e-5)


def test_sparse_cross_entropy_on_3d_logits():
    needs("Reshape")
    logits = rand(2, 3, 4, dtype=np.float32)
    labels = np.array([[0, 3, 1], [2, 2, 0]], np.int64)
    loss = nn_losses.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    assert loss.shape.as_list() == [2, 3]
    want = -np.take_along_axis(ref.log_softmax(logits), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(run(loss), want, rtol=1e-5)


def test_sigmoid_and_weighted_cross_entropy_are_stable():
    needs("ZerosLike", "GreaterEqual", "Select", "Neg", "Log1p", "Exp", "Mul", "Sub", "Abs")
    logits = np.array([-100.0, -1.0, 0.0, 2.0, 100.0], np.float32)
    labels = np.array([0.0, 1.0, 0.5, 0.0, 1.0], np.float32)
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    base = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    out = nn_losses.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    assert out.op.name == "logistic_loss"
    np.testing.assert_allclose(run(out), base, rtol=1e-6, atol=1e-6)
    q = 3.0
    weighted = (1 - z) * x + (1 + (q - 1) * z) * (np.log1p(np.exp(-np.abs(x))) +
                                                    np.maximum(-x, 0))
    out = nn_losses.weighted_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       pos_weight=q)
    np.testing.assert_allclose(run(out), weighted, rtol=1e-6, atol=1e-6)


def test_log_poisson_loss_with_stirling_term():
    needs("Exp", "Mul", "Sub", "Log", "ZerosLike", "OnesLike", "LogicalAnd", "GreaterEqual",
          "LessEqual", "Select")
    targets = np.array([0.0, 0.5, 2.0, 5.0], np.float32)
    log_input = np.array([0.1, -0.2, 0.7, 1.5], np.float32)
    t, li = targets.astype(np.float64), log_input.astype(np.float64)
    base = np.exp(li) - li * t
    np.testing.assert_allclose(run(nn_losses.log_poisson_loss(targets, log_input)), base,
                               rtol=1e-6)
    with np.errstate(divide="ignore", invalid="ignore"):
        stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
    full = base + np.where((t >= 0) & (t <= 1), 0, stirling)
    np.testing.assert_allclose(run(nn_losses.log_poisson_loss(targets, log_input, True)), full,
                               rtol=1e-5)


def test_moments_and_batch_normalization():
    needs("Mean", "SquaredDifference", "StopGradient", "Squeeze", "Rsqrt", "Mul", "Sub")
    x = rand(4, 3, 2, dtype=np.float32)
    mean, var = nn_norm.moments(x, [0, 1])
    assert (mean.op.name, mean.shape.as_list()) == ("moments/Squeeze", [2])
    m, v = run([mean, var])
    np.testing.assert_allclose(m, x.mean((0, 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, x.var((0, 1)), rtol=1e-5)
    mk, _ = nn_norm.moments(x, [0, 1], keep_dims=True)
    assert mk.shape.as_list() == [1, 1, 2]
    scale, offset = np.array([2.0, 0.5], np.float32), np.array([1.0, -1.0], np.float32)
    y = nn_norm.batch_normalization(x, m, v, offset, scale, 1e-3)
    np.testing.assert_allclose(run(y), (x - m) / np.sqrt(v + 1e-3) * scale + offset,
                               rtol=1e-4, atol=1e-5)
    y0 = nn_norm.batch_normalization(x, m, v, None, None, 1e-3)
    np.testing.assert_allclose(run(y0), (x - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-5)


def test_l2_normalize():
    needs("Square", "Sum", "Maximum", "Rsqrt", "Mul")
    x = rand(3, 4, dtype=np.float32)
    out = nn_norm.l2_normalize(x, axis=1)
    assert out.op.name == "l2_normalize"
    np.testing.assert_allclose(run(out), x / np.linalg.norm(x, axis=1, keepdims=True),
                               rtol=1e-5)
    zero = run(nn_norm.l2_normalize(np.zeros((2, 2), np.float32), dim=0))
    np.testing.assert_array_equal(zero, np.zeros((2, 2)))


def test_embedding_lookup_single_and_sharded():
    needs("GatherV2", "ConcatV2", "FloorMod", "FloorDiv", "Identity")
    table = np.arange(20, dtype=np.float32).reshape(10, 2)
    ids = np.array([[3, 0], [9, 4]], np.int32)
    single = nn_impl.embedding_lookup(table, ids)
    np.testing.assert_array_equal(run(single), table[ids])
    mod_shards = [table[p::3] for p in range(3)]       # id i lives in shard i % 3, row i // 3
    np.testing.assert_array_equal(run(nn_impl.embedding_lookup(mod_shards, ids)), table[ids])
    div_shards = [table[:4], table[4:7], table[7:]]
    np.testing.assert_array_equal(
        run(nn_impl.embedding_lookup(div_shards, ids, partition_strategy="div")), table[ids])


def test_zero_fraction_and_xw_plus_b():
    needs("Equal", "Cast", "Reshape", "Mean", "MatMul")
    x = np.array([[0, 1.5], [0, 0]], np.float32)
    assert run(nn_impl.zero_fraction(x)) == pytest.approx(0.75)
    w, b = rand(2, 3, dtype=np.float32), rand(3, dtype=np.float32)
    out = nn_ops.xw_plus_b(x, w, b)
    assert out.op.name == "xw_plus_b" and out.op.type == "BiasAdd"
    np.testing.assert_allclose(run(out), x @ w + b, rtol=1e-5)
