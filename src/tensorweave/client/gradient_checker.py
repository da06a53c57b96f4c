"""`compute_gradient` and `compute_gradient_error`, as TF1's `tf.test` has them.

The symbolic Jacobian of `y` with respect to `x` is read column by column: `gradients(y, x,
grad_ys=dy)` is run with `dy` one-hot at each element of y. The numeric Jacobian perturbs each
element of x by ±delta and takes central differences of y. Both have one row per element of x
and one column per element of y (complex values count twice: real, then imaginary part).
Runs in the default session, or in a new session on x's graph when there is none.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes
from tensorweave.ops.indexed_slices import IndexedSlices

_ALLOWED = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.complex64,
            dtypes.complex128)


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """The (theoretical, numerical) Jacobians of `y` with respect to `x`.

    Args:
      x: a Tensor, or a list of Tensors (then x_shape and x_init_value are lists too).
      x_shape: the shape of x.
      y: a Tensor.
      y_shape: the shape of y.
      x_init_value: the value of x to differentiate at (random in [0, 1) by default).
      delta: the perturbation of the central differences.
      init_targets: ops to run first (e.g. variable initializers).
      extra_feed_dict: other feeds to hold fixed.
    Returns:
      A pair of 2-D arrays of shape (x size, y size); a list of pairs when x is a list.
    """
    from tensorweave.autodiff.gradients import gradients

    extra = dict(extra_feed_dict or {})
    xs = x if isinstance(x, list) else [x]
    shapes = x_shape if isinstance(x, list) else [x_shape]
    inits = (x_init_value or [None] * len(xs)) if isinstance(x, list) else [x_init_value]
    with _session_for(xs[0]) as sess:
        dxs, dys = [], []
        for xi in xs:
            with xi.graph.as_default():
                dy = _dy_tensor(y, y_shape)
            dxs.append(gradients(y, xi, dy)[0])
            dys.append(dy)
        for target in init_targets or ():
            sess.run(target)
        result = [_jacobians(sess, xi, si, dxi, y, y_shape, dyi, ii, delta, extra)
                  for xi, si, dxi, dyi, ii in zip(xs, shapes, dxs, dys, inits)]
    return result if isinstance(x, list) else result[0]


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3,
                           init_targets=None, extra_feed_dict=None) -> float:
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    grad = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                            extra_feed_dict)
    pairs = [grad] if isinstance(grad, tuple) else grad
    error = 0.0
    for jt, jn in pairs:
        if jt.size or jn.size:
            error = max(error, float(np.max(np.fabs(jt - jn))))
    return error


class _session_for:  # noqa: N801 - a context manager used like a function
    """The default session (left open), or a new one on `x`'s graph (closed at exit)."""

    def __init__(self, x):
        from tensorweave.client.session import Session
        from tensorweave.framework.default_session import get_default_session

        self._own = None
        sess = get_default_session()
        if sess is None or sess.graph is not x.graph:
            sess = self._own = Session(graph=x.graph)
        self._sess = sess

    def __enter__(self):
        return self._sess

    def __exit__(self, *exc):
        if self._own is not None:
            self._own.close()


def _dy_tensor(y, y_shape):
    """TF's `identity(constant(1.0, shape=y_shape))`: a tensor the checker feeds per column."""
    from tensorweave.ops.apply import apply_op
    from tensorweave.ops.constant_op import constant

    ones = constant(np.ones(y_shape, dtype=y.dtype.base_dtype.np_dtype))
    return apply_op("Identity", ones)


def _jacobians(sess, x, x_shape, dx, y, y_shape, dy, x_init, delta, extra):
    t = x.dtype.base_dtype
    if t not in _ALLOWED or y.dtype.base_dtype not in _ALLOWED:
        raise TypeError(f"Don't support type {t.name} for x or {y.dtype.base_dtype.name} "
                        "for y")
    if x_init is not None:
        if list(x_shape) != list(np.shape(x_init)):
            raise ValueError(f"x_shape = {list(x_shape)}, init_data shape = "
                             f"{list(np.shape(x_init))}")
        x_data = np.asarray(x_init)
    else:
        x_data = np.random.random_sample(x_shape).astype(t.np_dtype)
        if t.is_complex:
            x_data.imag = np.random.random_sample(x_shape)
    jt = _theoretical(sess, x, x_shape, x_data, dy, y_shape, dx, extra)
    jn = _numeric(sess, x, x_shape, x_data, y, y_shape, delta, extra)
    return jt, jn


def _feeds(extra, new):
    out = dict(extra)
    out.update(new)
    return out


def _theoretical(sess, x, x_shape, x_data, dy, dy_shape, dx, extra):
    if x.dtype.is_complex:
        x_shape = tuple(x_shape) + (2,)
    x_size = int(np.prod(x_shape, dtype=np.int64))
    row_size = int(np.prod(x_shape[1:], dtype=np.int64))
    dy_size = int(np.prod(dy_shape, dtype=np.int64)) * (2 if dy.dtype.is_complex else 1)
    jac = np.zeros((x_size, dy_size), dtype=x.dtype.real_dtype.np_dtype)
    if dx is None:
        return jac
    dy_data = np.zeros(dy_shape, dtype=dy.dtype.base_dtype.np_dtype)
    flat = dy_data.ravel().view(dy.dtype.real_dtype.np_dtype)
    for col in range(dy_size):
        flat[col] = 1
        feeds = _feeds(extra, {x: x_data, dy: dy_data})
        if isinstance(dx, IndexedSlices):
            indices, values = sess.run([dx.indices, dx.values], feeds)
            for i, v in zip(indices, values):
                jac[i * row_size:(i + 1) * row_size, col] += np.ravel(v)
        else:
            jac[:, col] = np.ravel(sess.run(dx, feeds)).view(jac.dtype)
        flat[col] = 0
    return jac


def _numeric(sess, x, x_shape, x_data, y, y_shape, delta, extra):
    x_dt, y_dt = x.dtype.real_dtype.np_dtype, y.dtype.real_dtype.np_dtype
    x_size = int(np.prod(x_shape, dtype=np.int64)) * (2 if x.dtype.is_complex else 1)
    y_size = int(np.prod(y_shape, dtype=np.int64)) * (2 if y.dtype.is_complex else 1)
    x_data = np.asarray(x_data, dtype=x.dtype.base_dtype.np_dtype)
    scale = np.asarray(2 * delta, dtype=y_dt)[()]
    jac = np.zeros((x_size, y_size), dtype=x_dt)
    for row in range(x_size):
        x_pos, x_neg = x_data.copy(), x_data.copy()
        x_pos.ravel().view(x_dt)[row] += delta
        x_neg.ravel().view(x_dt)[row] -= delta
        y_pos = np.asarray(sess.run(y, _feeds(extra, {x: x_pos})))
        y_neg = np.asarray(sess.run(y, _feeds(extra, {x: x_neg})))
        jac[row, :] = np.ravel((y_pos - y_neg) / scale).view(y_dt)
    return jac


__all__ = ["compute_gradient", "compute_gradient_error"]
