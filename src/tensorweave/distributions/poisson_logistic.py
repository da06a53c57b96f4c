"""Poisson and Logistic, as TF 1.15's `tf.contrib.distributions` had them.

Poisson(rate | log_rate): pmf rate^x e^-rate / x!; values are floored first (as scipy does,
and TF 1.15 without validate_args), the CDF is Q(floor(x) + 1, rate) (Igammac). Logistic(loc,
scale): the CDF is sigmoid((x - loc) / scale); samples are loc + scale logit(u).
"""

from __future__ import annotations

import math

import numpy as np

from tensorweave.distributions import _ops as o
from tensorweave.distributions._util import (
    float_params,
    positive,
    sample_shape_n,
)
from tensorweave.distributions.continuous import LocScale
from tensorweave.distributions.distribution import NOT_REPARAMETERIZED, Distribution

__all__ = ["Logistic", "Poisson"]


class Poisson(Distribution):
    """The Poisson distribution of `rate` (or `log_rate`: exactly one) (TF 1.15's class).

    Raises:
      ValueError: both or neither of rate and log_rate given.
    """

    def __init__(self, rate=None, log_rate=None, validate_args=False, allow_nan_stats=True,
                 name="Poisson"):
        if (rate is None) == (log_rate is None):
            raise ValueError("Must specify exactly one of `rate` and `log_rate`.")
        params = {"rate": rate, "log_rate": log_rate, "validate_args": validate_args,
                  "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[rate, log_rate]) as scope:
            if rate is not None:
                self._rate = positive(float_params(["rate"], [rate])[0], validate_args)
                self._log_rate = o.log(self._rate)
            else:
                self._log_rate = float_params(["log_rate"], [log_rate])[0]
                self._rate = o.exp(self._log_rate)
        super().__init__(self._rate.dtype.base_dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._rate], scope)

    rate = property(lambda self: self._rate)
    log_rate = property(lambda self: self._log_rate)

    def _batch_shape(self):
        return self._rate.shape

    def _batch_shape_tensor(self):
        return o.shape(self._rate)

    def _sample_n(self, n, seed=None):
        return o.random_poisson(self._rate, [n], dtype=self.dtype, seed=seed)

    def _log_prob(self, x):
        x = o.floor(x)
        return x * self._log_rate - o.lgamma(1.0 + x) - self._rate

    def _cdf(self, x):
        x = o.floor(x) * o.ones_like(self._rate)
        rate = self._rate * o.ones_like(x)
        # NOTE: Igammac(a, .) is nan for a <= 0: below 0 the CDF is 0
        safe = o.where(o.less(x, 0.0 * x), o.zeros_like(x), x)
        return o.where(o.less(x, 0.0 * x), o.zeros_like(x), o.igammac(1.0 + safe, rate))

    def _mean(self):
        return o.identity(self._rate)

    def _variance(self):
        return o.identity(self._rate)

    def _stddev(self):
        return o.sqrt(self._rate)

    def _mode(self):
        return o.floor(self._rate)


class Logistic(LocScale):
    """The logistic distribution of `loc` and `scale` (TF 1.15's class)."""

    def __init__(self, loc, scale, validate_args=False, allow_nan_stats=True, name="Logistic"):
        super().__init__(loc, scale, validate_args, allow_nan_stats, name,
                         {"loc": loc, "scale": scale, "validate_args": validate_args,
                          "allow_nan_stats": allow_nan_stats, "name": name})

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        tiny = float(np.finfo(self.dtype.np_dtype).tiny)
        u = o.random_uniform(shape, minval=tiny, maxval=1.0, dtype=self.dtype, seed=seed)
        return self._loc + self._scale * (o.log(u) - o.log1p(-u))

    def _log_prob(self, x):
        z = self._z(x)
        return -z - 2.0 * o.softplus(-z) - o.log(self._scale)

    def _cdf(self, x):
        return o.sigmoid(self._z(x))

    def _log_cdf(self, x):
        return -o.softplus(-self._z(x))

    def _survival_function(self, x):
        return o.sigmoid(-self._z(x))

    def _log_survival_function(self, x):
        return -o.softplus(self._z(x))

    def _entropy(self):
        return o.log(self._scale) * o.ones_like(self._loc) + 2.0

    def _stddev(self):
        return self._scale * o.ones_like(self._loc) * (math.pi / math.sqrt(3.0))

    def _variance(self):
        return o.square(self._stddev())
