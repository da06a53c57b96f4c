"""TF1's learning-rate schedules (`tf.train.exponential_decay` & co.), as graph ops on a step.

Each function returns a scalar Tensor computed from `global_step` each time it is evaluated,
with TF's formulas and op names (`ExponentialDecay/...`, the result named after the scope).
The dtype is the learning rate's (float32 for Python floats); the step is cast to it.

Example:
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.1, step, decay_steps=1000, decay_rate=0.96)
    train_op = tf.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
"""

from __future__ import annotations

import math

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math_ops
from tensorweave.ops.apply import apply_op
from tensorweave.ops.constant_op import constant


def _require_step(global_step, fn: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")


def _start(learning_rate, global_step, *values):
    """(learning rate tensor, step cast to its dtype, values cast to it)."""
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = lr.dtype
    cast = [math_ops.cast(v, dtype) for v in values]
    return lr, cast, math_ops.cast(global_step, dtype)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """`learning_rate * decay_rate ^ (global_step / decay_steps)` (the exponent floored when
    `staircase`).

    Raises:
      ValueError: `global_step` is None.
    """
    _require_step(global_step, "exponential_decay")
    with get_default_graph().name_scope(name or "ExponentialDecay") as scope:
        lr, (decay_steps, decay_rate), step = _start(learning_rate, global_step, decay_steps,
                                                     decay_rate)
        p = step / decay_steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(decay_rate, p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """`learning_rate * exp(-decay_rate * global_step / decay_steps)` (floored exponent
    when `staircase`)."""
    _require_step(global_step, "natural_exp_decay")
    natural_exp_rate = math_ops.exp(math_ops.negative(decay_rate))
    return exponential_decay(learning_rate, global_step, decay_steps, natural_exp_rate,
                             staircase=staircase, name=name)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """`learning_rate / (1 + decay_rate * global_step / decay_steps)` (floored when
    `staircase`)."""
    _require_step(global_step, "inverse_time_decay")
    with get_default_graph().name_scope(name or "InverseTimeDecay") as scope:
        lr, (decay_steps, decay_rate), step = _start(learning_rate, global_step, decay_steps,
                                                     decay_rate)
        p = step / decay_steps
        if staircase:
            p = math_ops.floor(p)
        const = math_ops.cast(constant(1), lr.dtype)
        denom = math_ops.add(const, math_ops.multiply(decay_rate, p))
        # NOTE: TF calls divide(); for floating dtypes that is this RealDiv.
        return math_ops.realdiv(lr, denom, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """`(learning_rate - end) * (1 - step / decay_steps) ^ power + end`, with the step
    capped at `decay_steps`; with `cycle`, decay_steps grows to the first multiple of itself
    above the step instead."""
    _require_step(global_step, "polynomial_decay")
    from tensorweave.ops import gather_ops

    with get_default_graph().name_scope(name or "PolynomialDecay") as scope:
        lr, (end_lr, power, decay_steps_t), step = _start(
            learning_rate, global_step, end_learning_rate, power, decay_steps)
        if cycle:
            one = convert_to_tensor(1.0, dtype=lr.dtype)
            multiplier = gather_ops.where_v2(math_ops.equal(step, 0), one,
                                             math_ops.ceil(step / decay_steps_t))
            decay_steps_t = math_ops.multiply(decay_steps_t, multiplier)
        else:
            step = math_ops.minimum(step, decay_steps_t)
        p = math_ops.divide(step, decay_steps_t)
        # NOTE: TF's math_ops.add of floats is this AddV2 op.
        return apply_op("AddV2", math_ops.multiply(lr - end_lr, math_ops.pow(1 - p, power)),
                        end_lr, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """`values[0]` while x <= boundaries[0], `values[i]` while boundaries[i-1] < x <=
    boundaries[i], `values[-1]` after the last boundary.

    Raises:
      ValueError: len(values) != len(boundaries) + 1, boundaries of another dtype than `x`
        (int32 boundaries with an int64 `x` are cast), values of mixed dtypes.
    """
    from tensorweave.ops import gather_ops

    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with get_default_graph().name_scope(name or "PiecewiseConstant"):
        x = convert_to_tensor(x)
        bounds = [_boundary(convert_to_tensor(b), x) for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype.base_dtype != vals[0].dtype.base_dtype:
                raise ValueError("Values must have elements all with the same dtype "
                                 f"({vals[0].dtype.base_dtype} vs {v.dtype.base_dtype}).")
        # NOTE: TF picks the value with a `case`; a chain of selects gives the same value.
        result = vals[0]
        for b, v in zip(bounds, vals[1:]):
            result = gather_ops.where_v2(math_ops.greater(x, b), v, result)
        return result


def _boundary(b, x):
    if b.dtype.base_dtype == x.dtype.base_dtype:
        return b
    if b.dtype.base_dtype == dtypes.int32 and x.dtype.base_dtype == dtypes.int64:
        return math_ops.cast(b, dtypes.int64)
    raise ValueError(f"Boundaries ({b.dtype.base_dtype}) must have the same dtype as x "
                     f"({x.dtype.base_dtype}).")


piecewise_constant_decay = piecewise_constant


def _cosine(fraction):
    return 0.5 * (1.0 + math_ops.cos(constant(math.pi, dtype=fraction.dtype) * fraction))


def _restart(fraction, t_mul, t_mul_t):
    """(index of the current period, fraction of it completed)."""
    from tensorweave.ops import gather_ops

    def linear():
        i = math_ops.floor(fraction)
        return i, fraction - i

    def geometric():
        i = math_ops.floor(math_ops.log(1.0 - fraction * (1.0 - t_mul_t)) / math_ops.log(t_mul_t))
        sum_r = (1.0 - t_mul_t ** i) / (1.0 - t_mul_t)
        return i, (fraction - sum_r) / t_mul_t ** i

    if isinstance(t_mul, (int, float)):
        return linear() if float(t_mul) == 1.0 else geometric()
    # NOTE: TF takes a cond on t_mul == 1; selecting between both results is equivalent.
    is_one = math_ops.equal(t_mul_t, 1.0)
    (i_lin, f_lin), (i_geo, f_geo) = linear(), geometric()
    return (gather_ops.where_v2(is_one, i_lin, i_geo), gather_ops.where_v2(is_one, f_lin, f_geo))


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """`learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)`."""
    _require_step(global_step, "cosine_decay")
    with get_default_graph().name_scope(name or "CosineDecay"):
        lr, (decay_steps,), step = _start(learning_rate, global_step, decay_steps)
        step = math_ops.minimum(step, decay_steps)
        decayed = (1 - alpha) * _cosine(step / decay_steps) + alpha
        return math_ops.multiply(lr, decayed)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """Cosine decay with warm restarts (SGDR): period i lasts first_decay_steps * t_mul^i
    steps and starts from m_mul^i * learning_rate."""
    _require_step(global_step, "cosine_decay_restarts")
    with get_default_graph().name_scope(name or "SGDRDecay") as scope:
        lr, (first, alpha_t, t_mul_t, m_mul_t), step = _start(
            learning_rate, global_step, first_decay_steps, alpha, t_mul, m_mul)
        i_restart, fraction = _restart(step / first, t_mul, t_mul_t)
        cosine_decayed = m_mul_t ** i_restart * _cosine(fraction)
        decayed = (1 - alpha_t) * cosine_decayed + alpha_t
        return math_ops.multiply(lr, decayed, name=scope)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """`learning_rate * ((alpha + linear) * cosine + beta)`, linear = (decay_steps - step) /
    decay_steps and cosine = 0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps))."""
    _require_step(global_step, "linear_cosine_decay")
    with get_default_graph().name_scope(name or "LinearCosineDecay") as scope:
        lr, (decay_steps, num_periods, alpha, beta), step = _start(
            learning_rate, global_step, decay_steps, num_periods, alpha, beta)
        step = math_ops.minimum(step, decay_steps)
        linear_decayed = (decay_steps - step) / decay_steps
        fraction = 2.0 * num_periods * (step / decay_steps)
        decayed = (alpha + linear_decayed) * _cosine(fraction) + beta
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """linear_cosine_decay with Gaussian noise of variance initial_variance /
    (1 + step)^variance_decay added to the linear part (a new draw every evaluation)."""
    from tensorweave.ops import random_ops

    _require_step(global_step, "noisy_linear_cosine_decay")
    with get_default_graph().name_scope(name or "NoisyLinearCosineDecay") as scope:
        lr, (decay_steps, initial_variance, variance_decay, num_periods, alpha, beta), step = \
            _start(learning_rate, global_step, decay_steps, initial_variance, variance_decay,
                   num_periods, alpha, beta)
        step = math_ops.minimum(step, decay_steps)
        linear_decayed = (decay_steps - step) / decay_steps
        variance = initial_variance / math_ops.pow(1.0 + step, variance_decay)
        noise = random_ops.random_normal(linear_decayed.shape, stddev=math_ops.sqrt(variance))
        fraction = 2.0 * num_periods * (step / decay_steps)
        decayed = (alpha + linear_decayed + noise) * _cosine(fraction) + beta
        return math_ops.multiply(lr, decayed, name=scope)


__all__ = [
    "exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay",
    "piecewise_constant", "piecewise_constant_decay", "cosine_decay", "cosine_decay_restarts",
    "linear_cosine_decay", "noisy_linear_cosine_decay",
]
