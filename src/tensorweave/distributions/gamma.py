"""Gamma, Exponential, Beta, Dirichlet and StudentT (TF1's tf.distributions). Their samples
come from RandomGamma (Beta and StudentT salt the second seed as TF's gen_new_seed); the CDFs
of Gamma, Beta and StudentT are the regularized incomplete gamma and beta functions (Igamma,
Betainc), with the parameters broadcast against the value first (TF 2.21's Beta and StudentT
pass them unbroadcast, so there Betainc refuses a value of another shape)."""

from __future__ import annotations

import math

import numpy as np

from tensorweave.distributions import _ops as o
from tensorweave.distributions._util import (
    dynamic_batch,
    float_params,
    nan_where,
    positive,
    sample_shape_n,
    static_batch,
)
from tensorweave.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    gen_new_seed,
)
from tensorweave.shapes import TensorShape

__all__ = ["Beta", "Dirichlet", "Exponential", "Gamma", "StudentT"]


def _lbeta2(a, b):
    return o.lgamma(a) + o.lgamma(b) - o.lgamma(a + b)


class _Params(Distribution):
    """A distribution over float parameters whose broadcast is the batch shape."""

    _PARAMS: tuple = ()
    _REPARAM = FULLY_REPARAMETERIZED

    def _setup(self, values, validate_args, allow_nan_stats, name, extra=None):
        params = dict(zip(self._PARAMS, values), validate_args=validate_args,
                      allow_nan_stats=allow_nan_stats, name=name, **(extra or {}))
        with o.name_scope(name, values=list(values)) as scope:
            self._tensors = [t if n == "loc" else positive(t, validate_args)
                             for n, t in zip(self._PARAMS, float_params(self._PARAMS, values))]
        super().__init__(self._tensors[0].dtype.base_dtype, self._REPARAM, validate_args,
                         allow_nan_stats, params, self._tensors, scope)

    def _batch_shape(self):
        return static_batch(*self._tensors)

    def _batch_shape_tensor(self):
        return dynamic_batch(*self._tensors)


class Gamma(_Params):
    """Gamma(concentration, rate): rate^c x^(c-1) e^(-rate x) / Gamma(c) (TF's `Gamma`)."""

    _PARAMS = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=False, allow_nan_stats=True,
                 name="Gamma"):
        self._setup([concentration, rate], validate_args, allow_nan_stats, name)

    concentration = property(lambda self: self._tensors[0])
    rate = property(lambda self: self._tensors[1])

    def _sample_n(self, n, seed=None):
        return o.random_gamma([n], self.concentration, beta=self.rate, dtype=self.dtype,
                              seed=seed)

    def _log_prob(self, x):
        c, r = self.concentration, self.rate
        return (c - 1.0) * o.log(x) - r * x - (o.lgamma(c) - c * o.log(r))

    def _entropy(self):
        c, r = self.concentration, self.rate
        return c - o.log(r) + o.lgamma(c) + (1.0 - c) * o.digamma(c)

    def _cdf(self, x):
        return o.igamma(self.concentration, self.rate * x)

    def _mean(self):
        return self.concentration / self.rate

    def _variance(self):
        return self.concentration / o.square(self.rate)

    def _stddev(self):
        return o.sqrt(self.concentration) / self.rate

    def _mode(self):
        mode = (self.concentration - 1.0) / self.rate
        return nan_where(self.allow_nan_stats, o.less(self.concentration, 1.0), mode, "mode")


class Exponential(Gamma):
    """Exponential(rate) = Gamma(1, rate) (TF's `Exponential`)."""

    def __init__(self, rate, validate_args=False, allow_nan_stats=True, name="Exponential"):
        with o.name_scope(name, values=[rate]) as scope:
            self._rate = positive(float_params(["rate"], [rate])[0], validate_args)
            one = o.ones_like(self._rate)
        self._tensors = [one, self._rate]
        Distribution.__init__(self, self._rate.dtype.base_dtype, FULLY_REPARAMETERIZED,
                              validate_args, allow_nan_stats,
                              {"rate": rate, "validate_args": validate_args,
                               "allow_nan_stats": allow_nan_stats, "name": name},
                              [self._rate], scope)

    def _batch_shape(self):
        return self._rate.shape

    def _batch_shape_tensor(self):
        return o.shape(self._rate)

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        tiny = float(np.finfo(self.dtype.np_dtype).tiny)
        u = o.random_uniform(shape, minval=tiny, maxval=1.0, dtype=self.dtype, seed=seed)
        return -o.log(u) / self._rate

    def _cdf(self, x):
        return -o.expm1(-self._rate * x)

    def _log_survival_function(self, x):
        return -self._rate * x


class Beta(_Params):
    """Beta(concentration1, concentration0) on (0, 1) (TF's `tf.distributions.Beta`)."""

    _PARAMS = ("concentration1", "concentration0")
    _REPARAM = NOT_REPARAMETERIZED

    def __init__(self, concentration1=None, concentration0=None, validate_args=False,
                 allow_nan_stats=True, name="Beta"):
        self._setup([concentration1, concentration0], validate_args, allow_nan_stats, name)

    concentration1 = property(lambda self: self._tensors[0])
    concentration0 = property(lambda self: self._tensors[1])

    @property
    def total_concentration(self):
        return self.concentration1 + self.concentration0

    def _sample_n(self, n, seed=None):
        ones = o.ones_like(self.total_concentration)
        g1 = o.random_gamma([n], self.concentration1 * ones, dtype=self.dtype, seed=seed)
        g2 = o.random_gamma([n], self.concentration0 * ones, dtype=self.dtype,
                            seed=gen_new_seed(seed, "beta"))
        return g1 / (g1 + g2)

    def _log_prob(self, x):
        c1, c0 = self.concentration1, self.concentration0
        return (c1 - 1.0) * o.log(x) + (c0 - 1.0) * o.log1p(-x) - _lbeta2(c1, c0)

    def _cdf(self, x):
        ones = o.ones_like(x + self.total_concentration)
        return o.betainc(self.concentration1 * ones, self.concentration0 * ones, x * ones)

    def _entropy(self):
        c1, c0, total = self.concentration1, self.concentration0, self.total_concentration
        return (_lbeta2(c1, c0) - (c1 - 1.0) * o.digamma(c1) - (c0 - 1.0) * o.digamma(c0)
                + (total - 2.0) * o.digamma(total))

    def _mean(self):
        return self.concentration1 / self.total_concentration

    def _variance(self):
        m = self._mean()
        return m * (1.0 - m) / (1.0 + self.total_concentration)

    def _mode(self):
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        undefined = o.logical_or(o.less(self.concentration1, 1.0 + 0 * mode),
                                 o.less(self.concentration0, 1.0 + 0 * mode))
        return nan_where(self.allow_nan_stats, undefined, mode, "mode")


class Dirichlet(Distribution):
    """Dirichlet(concentration) over the simplex of the last axis (TF's `Dirichlet`)."""

    def __init__(self, concentration, validate_args=False, allow_nan_stats=True,
                 name="Dirichlet"):
        params = {"concentration": concentration, "validate_args": validate_args,
                  "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[concentration]) as scope:
            self._concentration = positive(float_params(["concentration"], [concentration])[0],
                                           validate_args)
            self._total = o.reduce_sum(self._concentration, -1)
        super().__init__(self._concentration.dtype.base_dtype, FULLY_REPARAMETERIZED,
                         validate_args, allow_nan_stats, params, [self._concentration], scope)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total)

    def _batch_shape(self):
        return self._concentration.shape[:-1] if self._concentration.shape.ndims is not None \
            else TensorShape(None)

    def _batch_shape_tensor(self):
        return o.shape(self._total)

    def _event_shape(self):
        return self._concentration.shape[-1:] if self._concentration.shape.ndims is not None \
            else TensorShape(None)

    def _event_shape_tensor(self):
        return o.shape(self._concentration)[-1:]

    def _sample_n(self, n, seed=None):
        g = o.random_gamma([n], self._concentration, dtype=self.dtype, seed=seed)
        return g / o.reduce_sum(g, -1, keepdims=True)

    def _log_prob(self, x):
        c = self._concentration
        lbeta = o.reduce_sum(o.lgamma(c), -1) - o.lgamma(self._total)
        return o.reduce_sum((c - 1.0) * o.log(x), -1) - lbeta

    def _entropy(self):
        c, total = self._concentration, self._total
        k = o.cast(o.shape(c)[-1], self.dtype)
        lbeta = o.reduce_sum(o.lgamma(c), -1) - o.lgamma(total)
        return (lbeta + (total - k) * o.digamma(total)
                - o.reduce_sum((c - 1.0) * o.digamma(c), -1))

    def _mean(self):
        return self._concentration / o.expand_dims(self._total, -1)

    def _variance(self):
        m = self._mean()
        return m * (1.0 - m) / o.expand_dims(1.0 + self._total, -1)

    def _covariance(self):
        m = self._mean()
        outer = -o.matmul(o.expand_dims(m, -1), o.expand_dims(m, -2))
        from tensorweave.ops.diag_ops import matrix_diag
        cov = outer + matrix_diag(m)
        return cov / o.expand_dims(o.expand_dims(1.0 + self._total, -1), -1)

    def _mode(self):
        k = o.cast(o.shape(self._concentration)[-1], self.dtype)
        mode = (self._concentration - 1.0) / o.expand_dims(self._total - k, -1)
        undefined = o.less(self._concentration, 1.0 + 0 * mode)
        return nan_where(self.allow_nan_stats, undefined, mode, "mode")


class StudentT(_Params):
    """Student's t with `df` degrees of freedom, location and scale (TF's `StudentT`)."""

    _PARAMS = ("df", "loc", "scale")

    def __init__(self, df, loc, scale, validate_args=False, allow_nan_stats=True,
                 name="StudentT"):
        self._setup([df, loc, scale], validate_args, allow_nan_stats, name)

    df = property(lambda self: self._tensors[0])
    loc = property(lambda self: self._tensors[1])
    scale = property(lambda self: self._tensors[2])

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        normal = o.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self.df * o.ones(self.batch_shape_tensor(), dtype=self.dtype)
        gamma = o.random_gamma([n], 0.5 * df, beta=0.5, dtype=self.dtype,
                               seed=gen_new_seed(seed, "student_t"))
        return normal * o.rsqrt(gamma / df) * self.scale + self.loc

    def _log_prob(self, x):
        y = (x - self.loc) / self.scale
        df = self.df
        unnorm = -0.5 * (df + 1.0) * o.log1p(o.square(y) / df)
        norm = (o.log(o.abs(self.scale)) + 0.5 * o.log(df) + 0.5 * math.log(math.pi)
                + o.lgamma(0.5 * df) - o.lgamma(0.5 * (df + 1.0)))
        return unnorm - norm

    def _cdf(self, x):
        y = (x - self.loc) / o.abs(self.scale)
        x_t = self.df / (o.square(y) + self.df)
        neg_cdf = 0.5 * o.betainc(0.5 * self.df * o.ones_like(x_t), 0.5, x_t)
        return o.where_v2(o.less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self):
        v = self.df * o.ones(self.batch_shape_tensor(), dtype=self.dtype)
        u = 0.5 * (v + 1.0) * (o.digamma(0.5 * (v + 1.0)) - o.digamma(0.5 * v))
        return (u + 0.5 * o.log(v) + _lbeta2(0.5 * v, 0.5 + 0 * v)
                + o.log(o.abs(self.scale)))

    def _mean(self):
        mean = self.loc * o.ones(self.batch_shape_tensor(), dtype=self.dtype)
        return nan_where(self.allow_nan_stats, o.less_equal_one(self.df, mean), mean, "mean")

    def _variance(self):
        df = self.df * o.ones(self.batch_shape_tensor(), dtype=self.dtype)
        var = o.square(self.scale) * df / (df - 2.0)
        var = o.where(o.greater(df, 2.0 + 0 * df), var, o.ones_like(var) * np.inf)
        return nan_where(self.allow_nan_stats, o.less_equal_one(df, var), var, "variance")

    def _stddev(self):
        return o.sqrt(self._variance())

    def _mode(self):
        return self.loc * o.ones(self.batch_shape_tensor(), dtype=self.dtype)
