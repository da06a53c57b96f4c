"""Bernoulli, Categorical and Multinomial (TF1's tf.distributions), parameterized by logits
or probs (exactly one)."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.distributions import _ops as o
from tensorweave.distributions._util import sample_shape_n
from tensorweave.distributions.distribution import NOT_REPARAMETERIZED, Distribution, RegisterKL
from tensorweave.shapes import TensorShape

__all__ = ["Bernoulli", "Categorical", "Multinomial"]


def _logits_and_probs(logits, probs, multidimensional: bool):
    """TF's distribution_util.get_logits_and_probs: one of them given, the other derived."""
    if (logits is None) == (probs is None):
        raise ValueError("Must pass probs or logits, but not both.")
    if probs is None:
        logits = o.convert_to_tensor(logits, name="logits", dtype_hint=dtypes.float32)
        probs = o.softmax(logits) if multidimensional else o.sigmoid(logits)
        return logits, probs
    probs = o.convert_to_tensor(probs, name="probs", dtype_hint=dtypes.float32)
    logits = o.log(probs) if multidimensional else o.log(probs) - o.log1p(-probs)
    return logits, probs


class Bernoulli(Distribution):
    """Bernoulli(probs) over {0, 1} (TF's `tf.distributions.Bernoulli`)."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Bernoulli"):
        params = {"logits": logits, "probs": probs, "dtype": dtype,
                  "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                  "name": name}
        with o.name_scope(name) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, False)
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._logits, self._probs], scope)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape(self):
        return self._logits.shape

    def _batch_shape_tensor(self):
        return o.shape(self._logits)

    def _call(self, method, value, name):
        with self._scope(name, [value]):
            value = o.convert_to_tensor(value, name="value", dtype_hint=self.dtype)
            return getattr(self, method)(value)

    def _sample_n(self, n, seed=None):
        shape = sample_shape_n(n, self.batch_shape_tensor())
        u = o.random_uniform(shape, seed=seed, dtype=self._probs.dtype.base_dtype)
        return o.cast(o.less(u, self._probs), self.dtype)

    def _log_prob(self, event):
        event = o.cast(event, self._logits.dtype.base_dtype)
        logits = self._logits
        if event.shape != logits.shape:
            logits = o.ones_like(event) * logits
            event = o.ones_like(logits) * event
        return -o.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self):
        return -self._logits * (o.sigmoid(self._logits) - 1.0) + o.softplus(-self._logits)

    def _mean(self):
        return o.ones_like(self._probs) * self._probs

    def _variance(self):
        return self._mean() * (1.0 - self._probs)

    def _mode(self):
        return o.cast(o.greater(self._probs, 0.5 + 0 * self._probs), self.dtype)


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K - 1} from logits or probs of the last axis
    (TF's `tf.distributions.Categorical`)."""

    def __init__(self, logits=None, probs=None, dtype=dtypes.int32, validate_args=False,
                 allow_nan_stats=True, name="Categorical"):
        params = {"logits": logits, "probs": probs, "dtype": dtype,
                  "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                  "name": name}
        with o.name_scope(name) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, True)
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._logits, self._probs], scope)

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    @property
    def event_size(self):
        k = self._logits.shape.as_tuple()
        if k is not None and k[-1] is not None:
            return o.convert_to_tensor(k[-1], dtype=dtypes.int32)
        return o.shape(self._logits)[-1]

    def _batch_shape(self):
        s = self._logits.shape
        return s[:-1] if s.ndims is not None else TensorShape(None)

    def _batch_shape_tensor(self):
        return o.shape(self._logits)[:-1]

    _call = Bernoulli._call

    def _sample_n(self, n, seed=None):
        k = self.event_size
        flat = o.reshape(self._logits, o.concat([[-1], o.reshape(k, [1])], 0))
        draws = o.multinomial(flat, n, seed=seed)              # [batch, n]
        draws = o.cast(o.transpose(draws), self.dtype)         # [n, batch]
        return o.reshape(draws, sample_shape_n(n, self.batch_shape_tensor()))

    def _log_prob(self, k):
        k = o.cast(k, dtypes.int32)
        logits = self._logits
        if k.shape.as_tuple() != logits.shape.as_tuple()[:-1]:
            ones_k = o.ones_like(o.cast(k, logits.dtype.base_dtype))
            logits = o.expand_dims(ones_k, -1) * logits
            k = o.cast(o.ones_like(logits[..., 0]) * o.cast(k, logits.dtype.base_dtype),
                       dtypes.int32)
        return -o.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _cdf(self, k):
        k = o.cast(k, dtypes.int32)
        onehot = o.one_hot(k, self.event_size, dtype=self._probs.dtype.base_dtype)
        from tensorweave.ops.reduction_ops import cumsum
        below = cumsum(self._probs, axis=-1, exclusive=True)
        return o.reduce_sum(below * onehot, -1)

    def _entropy(self):
        return -o.reduce_sum(o.log_softmax(self._logits) * o.softmax(self._logits), -1)

    def _mode(self):
        return o.cast(o.argmax(self._logits, axis=-1), self.dtype)


class Multinomial(Distribution):
    """Counts of `total_count` draws over K classes (TF's `tf.distributions.Multinomial`)."""

    def __init__(self, total_count, logits=None, probs=None, validate_args=False,
                 allow_nan_stats=True, name="Multinomial"):
        params = {"total_count": total_count, "logits": logits, "probs": probs,
                  "validate_args": validate_args, "allow_nan_stats": allow_nan_stats,
                  "name": name}
        with o.name_scope(name) as scope:
            self._logits, self._probs = _logits_and_probs(logits, probs, True)
            self._total_count = o.convert_to_tensor(
                total_count, name="total_count", dtype=self._probs.dtype.base_dtype)
            self._mean_val = o.expand_dims(self._total_count, -1) * self._probs
        super().__init__(self._probs.dtype.base_dtype, NOT_REPARAMETERIZED, validate_args,
                         allow_nan_stats, params, [self._logits, self._probs], scope)

    total_count = property(lambda self: self._total_count)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape(self):
        return self._mean_val.shape[:-1] if self._mean_val.shape.ndims is not None \
            else TensorShape(None)

    def _batch_shape_tensor(self):
        return o.shape(self._mean_val)[:-1]

    def _event_shape(self):
        return self._mean_val.shape[-1:] if self._mean_val.shape.ndims is not None \
            else TensorShape(None)

    def _event_shape_tensor(self):
        return o.shape(self._mean_val)[-1:]

    def _sample_n(self, n, seed=None):
        from tensorweave.ops.shape_inference import constant_value

        total = constant_value(self._total_count)
        if total is None or total.ndim != 0:
            raise NotImplementedError("Multinomial.sample needs a scalar total_count known "
                                      "when the graph is built")
        draws = int(total)
        k = o.shape(self._mean_val)[-1]
        logits = o.ones_like(self._mean_val) * self._logits
        flat = o.reshape(logits, o.concat([[-1], o.reshape(k, [1])], 0))   # [batch, K]
        picks = o.multinomial(flat, n * draws, seed=seed)                  # [batch, n*draws]
        picks = o.reshape(picks, o.concat([o.shape(flat)[:1], [n, draws]], 0))
        counts = o.reduce_sum(o.one_hot(picks, k, dtype=self.dtype), -2)   # [batch, n, K]
        counts = o.transpose(counts, [1, 0, 2])
        return o.reshape(counts, o.concat([[n], o.shape(self._mean_val)], 0))

    def _log_prob(self, counts):
        log_unnorm = o.reduce_sum(counts * o.log_softmax(self._logits), -1)
        log_norm = -(o.lgamma(self._total_count + 1.0)
                     - o.reduce_sum(o.lgamma(counts + 1.0), -1))
        return log_unnorm - log_norm

    def _mean(self):
        return o.ones_like(self._mean_val) * self._mean_val

    def _variance(self):
        p = self._probs * o.ones_like(self._mean_val)
        return self._mean_val * (1.0 - p)

    def _covariance(self):
        p = self._probs * o.ones_like(self._mean_val)
        n = o.expand_dims(o.expand_dims(self._total_count, -1), -1)
        from tensorweave.ops.diag_ops import matrix_diag
        return n * (matrix_diag(p) - o.matmul(o.expand_dims(p, -1), o.expand_dims(p, -2)))


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a, b, name=None):
    """TF's _kl_bernoulli_bernoulli."""
    with o.name_scope(name, "kl_bernoulli_bernoulli"):
        delta_a = o.softplus(-b.logits) - o.softplus(-a.logits)
        delta_b = o.softplus(b.logits) - o.softplus(a.logits)
        return o.sigmoid(a.logits) * delta_a + o.sigmoid(-a.logits) * delta_b


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a, b, name=None):
    """TF's _kl_categorical_categorical: sum p_a (log p_a - log p_b)."""
    with o.name_scope(name, "kl_categorical_categorical"):
        return o.reduce_sum(o.softmax(a.logits) * (o.log_softmax(a.logits) -
                                                   o.log_softmax(b.logits)), -1)
