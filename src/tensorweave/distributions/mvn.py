"""The multivariate normal distributions of TF 1.15's `tf.contrib.distributions`:
MultivariateNormalDiag, MultivariateNormalTriL and MultivariateNormalFullCovariance, with
KL(MVN || MVN).

Each is N(loc, scale scale^T) for a lower-triangular `scale` (a diagonal one for the Diag
class): samples are loc + scale z with z standard normal, the density solves scale y = x - loc.
The batch shape broadcasts loc's leading dims with the scale's; the event shape is [k]. `scale`
is held as a `ScaleOperator` (TF's LinearOperator, reduced to what these need).
"""

from __future__ import annotations

import math

from tensorweave.distributions import _ops as o
from tensorweave.distributions._util import float_params
from tensorweave.distributions.distribution import FULLY_REPARAMETERIZED, Distribution, RegisterKL
from tensorweave.ops.diag_ops import matrix_diag, matrix_diag_part
from tensorweave.ops.linalg_ops import cholesky, matrix_triangular_solve
from tensorweave.shapes import TensorShape

__all__ = ["MultivariateNormalDiag", "MultivariateNormalFullCovariance",
           "MultivariateNormalLinearOperator", "MultivariateNormalTriL", "ScaleOperator"]


class ScaleOperator:
    """A batch of lower-triangular k x k matrices: a diagonal (`diag`, [..., k]) or a full
    triangle (`tril`, [..., k, k]). The part of TF's LinearOperator the MVNs use."""

    def __init__(self, diag=None, tril=None):
        assert (diag is None) != (tril is None)
        self._diag, self._tril = diag, tril

    is_diag = property(lambda self: self._diag is not None)
    dtype = property(lambda self: (self._diag if self.is_diag else self._tril).dtype)

    @property
    def batch_shape(self) -> TensorShape:
        shape = (self._diag if self.is_diag else self._tril).shape
        if shape.ndims is None:
            return TensorShape(None)
        return shape[:-1] if self.is_diag else shape[:-2]

    def batch_shape_tensor(self):
        t = self._diag if self.is_diag else self._tril
        return o.shape(t)[:-1] if self.is_diag else o.shape(t)[:-2]

    def diag_part(self):
        return self._diag if self.is_diag else matrix_diag_part(self._tril)

    def to_dense(self):
        return matrix_diag(self._diag) if self.is_diag else self._tril

    def log_abs_determinant(self):
        return o.reduce_sum(o.log(o.abs(self.diag_part())), -1)

    def matvec(self, x):
        """scale x for x of shape [..., k] (batch dims broadcast)."""
        if self.is_diag:
            return self._diag * x
        return o.reduce_sum(self._tril * o.expand_dims(x, -2), -1)

    def solvevec(self, x):
        """scale^-1 x (forward substitution), batch dims broadcast."""
        if self.is_diag:
            return x / self._diag
        tril, rhs = _broadcast_batch(self._tril, o.expand_dims(x, -1))
        return o.reshape(matrix_triangular_solve(tril, rhs, lower=True),
                         o.shape(rhs)[:-1])

    def solve(self, m):
        """scale^-1 m for a batch of matrices m [..., k, n]."""
        if self.is_diag:
            return m / o.expand_dims(self._diag, -1)
        tril, rhs = _broadcast_batch(self._tril, m)
        return matrix_triangular_solve(tril, rhs, lower=True)


def _broadcast_batch(a, b):
    """a [..., k, k] and b [..., k, n] with their batch dims broadcast to one another."""
    batch = o.broadcast_dynamic_shape(o.shape(a)[:-2], o.shape(b)[:-2])
    a_full = o.concat([batch, o.shape(a)[-2:]], 0)
    b_full = o.concat([batch, o.shape(b)[-2:]], 0)
    zeros_a, zeros_b = o.zeros(a_full, dtype=a.dtype), o.zeros(b_full, dtype=b.dtype)
    return a + zeros_a, b + zeros_b


class MultivariateNormalLinearOperator(Distribution):
    """N(loc, scale scale^T) for a `ScaleOperator` scale (TF's class of that name)."""

    def __init__(self, loc=None, scale=None, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalLinearOperator", parameters=None):
        self._loc, self._scale = loc, scale
        super().__init__(scale.dtype.base_dtype, FULLY_REPARAMETERIZED, validate_args,
                         allow_nan_stats, parameters or {}, [t for t in (loc,) if t is not None],
                         name)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _loc_or_zero(self):
        if self._loc is not None:
            return self._loc
        return o.zeros_like(self._scale.diag_part())

    def _batch_shape(self):
        shape = self._scale.batch_shape
        if self._loc is not None:
            loc = self._loc.shape
            shape = o.broadcast_static_shape(
                shape, loc[:-1] if loc.ndims is not None else TensorShape(None))
        return shape

    def _batch_shape_tensor(self):
        shape = self._scale.batch_shape_tensor()
        if self._loc is not None:
            shape = o.broadcast_dynamic_shape(shape, o.shape(self._loc)[:-1])
        return shape

    def _event_shape(self):
        for t in (self._loc, self._scale.diag_part()):
            if t is not None and t.shape.ndims is not None:
                return t.shape[-1:]
        return TensorShape([None])

    def _event_shape_tensor(self):
        return o.shape(self._scale.diag_part())[-1:]

    def _full_shape(self):
        return o.concat([self.batch_shape_tensor(), self.event_shape_tensor()], 0)

    def _sample_n(self, n, seed=None):
        shape = o.concat([o.reshape(o.convert_to_tensor(n, dtype="int32"), [1]),
                          self._full_shape()], 0)
        z = o.random_normal(shape, dtype=self.dtype, seed=seed)
        return self._scale.matvec(z) + self._loc_or_zero()

    def _log_prob(self, x):
        y = self._scale.solvevec(x - self._loc_or_zero())
        k = o.cast(o.shape(y)[-1], self.dtype)
        return (-0.5 * o.reduce_sum(o.square(y), -1) - self._scale.log_abs_determinant()
                - 0.5 * k * math.log(2.0 * math.pi))

    def _entropy(self):
        k = o.cast(self.event_shape_tensor()[0], self.dtype)
        log_det = self._scale.log_abs_determinant() * o.ones(self.batch_shape_tensor(),
                                                             dtype=self.dtype)
        return 0.5 * k * (1.0 + math.log(2.0 * math.pi)) + log_det

    def _mean(self):
        return self._loc_or_zero() * o.ones(self._full_shape(), dtype=self.dtype)

    def _mode(self):
        return self._mean()

    def _covariance(self):
        dense = self._scale.to_dense()
        cov = o.matmul(dense, dense, transpose_b=True)
        batch = o.concat([self.batch_shape_tensor(), self.event_shape_tensor(),
                          self.event_shape_tensor()], 0)
        return cov * o.ones(batch, dtype=self.dtype)

    def _variance(self):
        if self._scale.is_diag:
            var = o.square(self._scale.diag_part())
        else:
            var = o.reduce_sum(o.square(self._scale.to_dense()), -1)
        return var * o.ones(self._full_shape(), dtype=self.dtype)

    def _stddev(self):
        return o.sqrt(self._variance())


def _params(names, values, name):
    present = [(n, v) for n, v in zip(names, values) if v is not None]
    if not present:
        raise ValueError("Must specify one or both of `loc`, `scale_diag`.")
    tensors = float_params([n for n, _ in present], [v for _, v in present])
    out = dict(zip([n for n, _ in present], tensors))
    return [out.get(n) for n in names]


class MultivariateNormalDiag(MultivariateNormalLinearOperator):
    """N(loc, diag(scale_diag + scale_identity_multiplier)^2) (TF 1.15's class).

    `scale_diag` [..., k] and `scale_identity_multiplier` (a scalar per batch member) add; with
    neither, the scale is the identity of loc's size.

    Raises:
      ValueError: neither loc nor scale_diag given (the event size is unknown).
    """

    def __init__(self, loc=None, scale_diag=None, scale_identity_multiplier=None,
                 validate_args=False, allow_nan_stats=True, name="MultivariateNormalDiag"):
        params = {"loc": loc, "scale_diag": scale_diag,
                  "scale_identity_multiplier": scale_identity_multiplier,
                  "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                  "name": name}
        with o.name_scope(name, values=[loc, scale_diag, scale_identity_multiplier]) as scope:
            if loc is None and scale_diag is None:
                raise ValueError("Must specify one or both of `loc`, `scale_diag`.")
            loc, diag, mult = _params(["loc", "scale_diag", "scale_identity_multiplier"],
                                      [loc, scale_diag, scale_identity_multiplier], name)
            if diag is None:
                diag = o.ones_like(loc)
                diag = diag * o.expand_dims(mult, -1) if mult is not None else diag
            elif mult is not None:
                diag = diag + o.expand_dims(mult, -1)
        super().__init__(loc, ScaleOperator(diag=diag), validate_args, allow_nan_stats, scope,
                         params)


class MultivariateNormalTriL(MultivariateNormalLinearOperator):
    """N(loc, scale_tril scale_tril^T) for a lower-triangular `scale_tril` [..., k, k] (TF 1.15's
    class; the strict upper triangle is ignored, as TF's LinearOperatorLowerTriangular does)."""

    def __init__(self, loc=None, scale_tril=None, validate_args=False, allow_nan_stats=True,
                 name="MultivariateNormalTriL"):
        params = {"loc": loc, "scale_tril": scale_tril, "validate_args": validate_args,
                  "allow_nan_stats": allow_nan_stats, "name": name}
        with o.name_scope(name, values=[loc, scale_tril]) as scope:
            if scale_tril is None:
                raise ValueError("Must specify `scale_tril`.")
            loc, tril = _params(["loc", "scale_tril"], [loc, scale_tril], name)
            tril = o.matrix_band_part(tril, -1, 0)
        super().__init__(loc, ScaleOperator(tril=tril), validate_args, allow_nan_stats, scope,
                         params)


class MultivariateNormalFullCovariance(MultivariateNormalTriL):
    """N(loc, covariance_matrix), the scale its Cholesky factor (TF 1.15's class)."""

    def __init__(self, loc=None, covariance_matrix=None, validate_args=False,
                 allow_nan_stats=True, name="MultivariateNormalFullCovariance"):
        with o.name_scope(name, values=[loc, covariance_matrix]) as scope:
            if covariance_matrix is None:
                raise ValueError("Must specify `covariance_matrix`.")
            loc, cov = _params(["loc", "covariance_matrix"], [loc, covariance_matrix], name)
            tril = cholesky(cov)
        MultivariateNormalTriL.__init__(self, loc, tril, validate_args, allow_nan_stats,
                                        scope)
        self._parameters = {"loc": loc, "covariance_matrix": covariance_matrix,
                            "validate_args": validate_args,
                            "allow_nan_stats": allow_nan_stats, "name": name}


@RegisterKL(MultivariateNormalLinearOperator, MultivariateNormalLinearOperator)
def _kl_mvn_mvn(a, b, name=None):
    """KL(a || b) = log|det S_b| - log|det S_a|
    + (||S_b^-1 S_a||_F^2 + ||S_b^-1 (mu_b - mu_a)||^2 - k) / 2 (TF's _kl_brute_force)."""
    with o.name_scope(name, "kl_mvn", [a.loc, b.loc]):
        k = o.cast(a.event_shape_tensor()[0], a.dtype)
        ratio = b.scale.solve(a.scale.to_dense())
        frob = o.reduce_sum(o.square(ratio), [-2, -1])
        diff = b.scale.solvevec(b._loc_or_zero() - a._loc_or_zero())
        mahal = o.reduce_sum(o.square(diff), -1)
        return (b.scale.log_abs_determinant() - a.scale.log_abs_determinant()
                + 0.5 * (frob + mahal - k))
