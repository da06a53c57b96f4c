"""Normal, Uniform and Laplace (TF1's tf.distributions, python/ops/distributions/)."""

from __future__ import annotations

import math

import numpy as np

from tensorweave.distributions import _ops as o
from tensorweave.distributions._util import (
    dynamic_batch,
    float_params,
    positive,
    sample_shape_n,
    static_batch,
)
from tensorweave.distributions.distribution import FULLY_REPARAMETERIZED, Distribution, RegisterKL

__all__ = ["Laplace", "Normal", "Uniform"]


class LocScale(Distribution):
    """A distribution of `loc` and `scale` (floats of one dtype; `scale` > 0 is checked under
    validate_args): Normal, Laplace and contrib's Logistic. Its mean and mode are `loc`."""

    def __init__(self, loc, scale, validate_args, allow_nan_stats, name, params):
        with o.name_scope(name, values=[loc, scale]) as scope:
            self._loc, self._scale = float_params(["loc", "scale"], [loc, scale])
            self._scale = positive(self._scale, validate_args)
        super().__init__(self._loc.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._loc, self._scale],
                         scope if isinstance(scope, str) else name)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape(self):
        return static_batch(self._loc, self._scale)

    def _batch_shape_tensor(self):
        return dynamic_batch(self._loc, self._scale)

    def _z(self, x):
        return (x - self._loc) / self._scale

    def _mean(self):
        return self._loc * o.ones_like(self._scale)

    def _mode(self):
        return self._mean()


class Normal(LocScale):
    """N(loc, scale**2) (TF's `tf.distributions.Normal`)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Normal"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name,
                         {"loc": loc, "scale": scale, "validate_args": validate_args,
                          "allow_nan_stats": allow_nan_stats, "name": name})

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        sampled = o.random_normal(shape, mean=0.0, stddev=1.0, dtype=self.dtype, seed=seed)
        return sampled * self._scale + self._loc

    def _log_prob(self, x):
        z = self._z(x)
        return -0.5 * o.square(z) - (0.5 * math.log(2.0 * math.pi) + o.log(self._scale))

    def _cdf(self, x):
        return 0.5 * o.erfc(-self._z(x) / math.sqrt(2.0))

    def _survival_function(self, x):
        return 0.5 * o.erfc(self._z(x) / math.sqrt(2.0))

    def _entropy(self):
        scale = self._scale * o.ones_like(self._loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + o.log(scale)

    def _stddev(self):
        return self._scale * o.ones_like(self._loc)

    def _variance(self):
        return o.square(self._stddev())


class Laplace(LocScale):
    """The Laplace distribution exp(-|x - loc| / scale) / (2 scale) (TF's `Laplace`)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Laplace"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name,
                         {"loc": loc, "scale": scale, "validate_args": validate_args,
                          "allow_nan_stats": allow_nan_stats, "name": name})

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        dt = np.dtype(self.dtype.np_dtype).type
        low = np.nextafter(dt(-1.0), dt(0.0))
        u = o.random_uniform(shape, minval=float(low), maxval=1.0, dtype=self.dtype, seed=seed)
        return self._loc - self._scale * o.sign(u) * o.log1p(-o.abs(u))

    def _log_prob(self, x):
        return -o.abs(self._z(x)) - (math.log(2.0) + o.log(self._scale))

    def _cdf(self, x):
        z = self._z(x)
        return 0.5 - 0.5 * o.sign(z) * o.expm1(-o.abs(z))

    def _entropy(self):
        scale = self._scale * o.ones_like(self._loc)
        return math.log(2.0) + 1.0 + o.log(scale)

    def _stddev(self):
        return math.sqrt(2.0) * self._scale * o.ones_like(self._loc)

    def _variance(self):
        return o.square(self._stddev())

    def _median(self):
        return self._mean()


class Uniform(Distribution):
    """The uniform distribution on [low, high) (TF's `tf.distributions.Uniform`)."""

    def __init__(self, low=0.0, high=1.0, validate_args=False, allow_nan_stats=True,
                 name="Uniform"):
        params = {"low": low, "high": high, "validate_args": validate_args,
                  "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[low, high]) as scope:
            self._low, self._high = float_params(["low", "high"], [low, high])
            if validate_args:
                self._high = self._low + positive(self._high - self._low, True)
        super().__init__(self._low.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._low, self._high],
                         scope if isinstance(scope, str) else name)

    low = property(lambda self: self._low)
    high = property(lambda self: self._high)

    def range(self, name="range"):
        with self._scope(name):
            return self._high - self._low

    def _batch_shape(self):
        return static_batch(self._low, self._high)

    def _batch_shape_tensor(self):
        return dynamic_batch(self._low, self._high)

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        u = o.random_uniform(shape, dtype=self.dtype, seed=seed)
        return self._low + (self._high - self._low) * u

    def _prob(self, x):
        broadcast_x = x * o.ones_like(self._low + self._high)
        zeros = o.zeros_like(broadcast_x)
        inside = o.ones_like(broadcast_x) / (self._high - self._low)
        outside = o.logical_or(o.less(broadcast_x, self._low),
                               o.greater_equal(broadcast_x, self._high))
        return o.where(o.is_nan(broadcast_x), broadcast_x, o.where(outside, zeros, inside))

    def _cdf(self, x):
        broadcast_x = x * o.ones_like(self._low + self._high)
        zeros, ones = o.zeros_like(broadcast_x), o.ones_like(broadcast_x)
        below = o.where(o.less(broadcast_x, self._low), zeros,
                        (broadcast_x - self._low) / (self._high - self._low))
        return o.where(o.greater_equal(broadcast_x, self._high), ones, below)

    def _entropy(self):
        return o.log(self._high - self._low)

    def _mean(self):
        return (self._low + self._high) / 2.0

    def _variance(self):
        return o.square(self._high - self._low) / 12.0

    def _stddev(self):
        return (self._high - self._low) / math.sqrt(12.0)


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a, b, name=None):
    """KL(N(mu_a, s_a) || N(mu_b, s_b)) in closed form (TF's _kl_normal_normal)."""
    with o.name_scope(name, "kl_normal_normal", [a.loc, b.loc]):
        s_a_sq, s_b_sq = o.square(a.scale), o.square(b.scale)
        ratio = s_a_sq / s_b_sq
        return o.square(a.loc - b.loc) / (2.0 * s_b_sq) + 0.5 * (ratio - 1.0 - o.log(ratio))
