"""The `Distribution` base class of TF1's `tf.distributions` (python/ops/distributions/
distribution.py), KL registration (`RegisterKL`, `kl_divergence`) and TF's seed salting.

A distribution holds parameter tensors with a batch shape (their broadcast) and an event shape
(per sample). Subclasses implement `_batch_shape`, `_event_shape`, `_sample_n(n, seed)` and
any of `_log_prob`, `_prob`, `_cdf`, `_log_cdf`, `_survival_function`, `_entropy`, `_mean`,
`_mode`, `_stddev`, `_variance`, `_covariance`; a method a subclass lacks raises
NotImplementedError naming the distribution, as TF.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from tensorweave.distributions import _ops as o
from tensorweave.shapes import TensorShape

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Distribution",
           "ReparameterizationType", "RegisterKL", "kl_divergence"]


class ReparameterizationType:
    """Whether samples are differentiable in the parameters (TF's enum-like class)."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameteriation Type: {self._rep_type}>"

    def __eq__(self, other) -> bool:
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def gen_new_seed(seed, salt: str):
    """TF's distribution_util.gen_new_seed: a second op seed derived from `seed`."""
    if seed is None:
        return None
    digest = hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


class Distribution:
    """A batch of probability distributions (TF1's `tf.distributions.Distribution`)."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._parameters = dict(parameters or {})
        self._parameters.pop("self", None)
        self._graph_parents = list(graph_parents or [])
        self._name = name or type(self).__name__

    # -- properties -----------------------------------------------------------------------
    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    parameters = property(lambda self: dict(self._parameters))
    reparameterization_type = property(lambda self: self._reparameterization_type)
    allow_nan_stats = property(lambda self: self._allow_nan_stats)
    validate_args = property(lambda self: self._validate_args)

    @property
    def batch_shape(self) -> TensorShape:
        return self._batch_shape()

    @property
    def event_shape(self) -> TensorShape:
        return self._event_shape()

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._scope(name):
            static = self.batch_shape
            if static.is_fully_defined():
                return o.convert_to_tensor(static.as_list(), dtype="int32")
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._scope(name):
            static = self.event_shape
            if static.is_fully_defined():
                return o.convert_to_tensor(static.as_list(), dtype="int32")
            return self._event_shape_tensor()

    def _event_shape(self) -> TensorShape:
        return TensorShape([])

    def _event_shape_tensor(self):
        return o.convert_to_tensor([], dtype="int32")

    def is_scalar_event(self, name="is_scalar_event"):
        return self.event_shape.ndims == 0

    def is_scalar_batch(self, name="is_scalar_batch"):
        return self.batch_shape.ndims == 0

    def _scope(self, name, values=()):
        return o.name_scope(self.name, values=list(values)) if name is None else \
            _nested_scope(self.name, name, values)

    def copy(self, **override):
        """A new distribution of the same type with some parameters replaced."""
        params = dict(self._parameters, **override)
        return type(self)(**params)

    # -- sampling -------------------------------------------------------------------------
    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape sample_shape + batch_shape + event_shape."""
        with self._scope(name, [sample_shape]):
            sample_shape = o.convert_to_tensor(sample_shape, dtype="int32", name="sample_shape")
            static = _static_value(sample_shape)
            flat = o.reshape(sample_shape, [-1])
            if static is not None:
                n = int(np.prod(static))
            else:
                from tensorweave.ops.reduction_ops import reduce_prod
                n = reduce_prod(flat)
            samples = self._sample_n(n, seed)
            out = o.reshape(samples, o.concat([flat, o.shape(samples)[1:]], 0))
            if static is not None:
                rest = samples.shape[1:] if samples.shape.ndims is not None else \
                    TensorShape(None)
                out.set_shape(TensorShape([int(v) for v in np.ravel(static)]).concatenate(rest))
            return out

    # -- densities and functions ------------------------------------------------------------
    def _call(self, method: str, value, name):
        with self._scope(name, [value]):
            value = o.convert_to_tensor(value, name="value", dtype_hint=self.dtype)
            if self.dtype is not None and value.dtype.base_dtype != self.dtype and \
                    self.dtype.is_floating:
                value = o.cast(value, self.dtype)
            return getattr(self, method)(value)

    def _has(self, method: str) -> bool:
        return getattr(type(self), method, None) is not getattr(Distribution, method, None)

    def log_prob(self, value, name="log_prob"):
        if self._has("_log_prob"):
            return self._call("_log_prob", value, name)
        return self._call("_log_of_prob", value, name)

    def prob(self, value, name="prob"):
        if self._has("_prob"):
            return self._call("_prob", value, name)
        return self._call("_exp_of_log_prob", value, name)

    def cdf(self, value, name="cdf"):
        if self._has("_cdf"):
            return self._call("_cdf", value, name)
        return self._call("_exp_of_log_cdf", value, name)

    def log_cdf(self, value, name="log_cdf"):
        if self._has("_log_cdf"):
            return self._call("_log_cdf", value, name)
        return self._call("_log_of_cdf", value, name)

    def survival_function(self, value, name="survival_function"):
        if self._has("_survival_function"):
            return self._call("_survival_function", value, name)
        return 1.0 - self.cdf(value, name)

    def log_survival_function(self, value, name="log_survival_function"):
        if self._has("_log_survival_function"):
            return self._call("_log_survival_function", value, name)
        return o.log1p(-self.cdf(value, name))

    def _log_of_prob(self, x):
        self._require("_prob", "log_prob")
        return o.log(self._prob(x))

    def _exp_of_log_prob(self, x):
        self._require("_log_prob", "prob")
        return o.exp(self._log_prob(x))

    def _exp_of_log_cdf(self, x):
        self._require("_log_cdf", "cdf")
        return o.exp(self._log_cdf(x))

    def _log_of_cdf(self, x):
        self._require("_cdf", "log_cdf")
        return o.log(self._cdf(x))

    def _require(self, method: str, public: str) -> None:
        if not self._has(method):
            raise NotImplementedError(f"{public} is not implemented: {type(self).__name__}")

    def _stat(self, method: str, name: str, fallback=None):
        with self._scope(name):
            if self._has(method):
                return getattr(self, method)()
            if fallback is not None:
                return fallback()
            raise NotImplementedError(f"{name} is not implemented: {type(self).__name__}")

    def entropy(self, name="entropy"):
        return self._stat("_entropy", name)

    def mean(self, name="mean"):
        return self._stat("_mean", name)

    def mode(self, name="mode"):
        return self._stat("_mode", name)

    def variance(self, name="variance"):
        return self._stat("_variance", name, lambda: o.square(self._stddev())
                          if self._has("_stddev") else self._raise("variance"))

    def stddev(self, name="stddev"):
        return self._stat("_stddev", name, lambda: o.sqrt(self._variance())
                          if self._has("_variance") else self._raise("stddev"))

    def covariance(self, name="covariance"):
        return self._stat("_covariance", name)

    def _raise(self, name):
        raise NotImplementedError(f"{name} is not implemented: {type(self).__name__}")

    def cross_entropy(self, other, name="cross_entropy"):
        """H[self, other] = entropy(self) + KL(self || other)."""
        with self._scope(name):
            return self.entropy() + kl_divergence(self, other)

    def kl_divergence(self, other, name="kl_divergence"):
        with self._scope(name):
            return kl_divergence(self, other)

    def __str__(self) -> str:
        return (f"tf.distributions.{type(self).__name__}(\"{self.name}\", "
                f"batch_shape={self.batch_shape}, event_shape={self.event_shape}, "
                f"dtype={getattr(self.dtype, 'name', self.dtype)})")

    __repr__ = __str__


def _nested_scope(outer: str, inner: str, values):
    import contextlib

    @contextlib.contextmanager
    def scope():
        with o.name_scope(outer, values=list(values)):
            with o.name_scope(inner, values=list(values)) as s:
                yield s
    return scope()


def _static_value(t):
    from tensorweave.ops.shape_inference import constant_value

    v = constant_value(t)
    return None if v is None else np.asarray(v)


# -- KL divergence registry -----------------------------------------------------------------
_KL: dict[tuple[type, type], Callable] = {}


class RegisterKL:
    """Decorator registering `fn(a, b, name)` as KL(a || b) for a pair of distribution types
    (TF's `tf.distributions.RegisterKL`)."""

    def __init__(self, dist_cls_a, dist_cls_b):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, fn):
        if self._key in _KL:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has "
                             f"already been registered to: {_KL[self._key]}")
        _KL[self._key] = fn
        return fn


def _lookup_kl(type_a, type_b):
    for a in type_a.__mro__:
        for b in type_b.__mro__:
            fn = _KL.get((a, b))
            if fn is not None:
                return fn
    return None


def kl_divergence(distribution_a, distribution_b, allow_nan_stats=True, name=None):
    """KL(a || b) by the function registered for the pair (TF's `kl_divergence`).

    Raises:
      NotImplementedError: no KL is registered for the two types.
    """
    fn = _lookup_kl(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(
            f"No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}")
    with o.name_scope("KullbackLeibler"):
        return fn(distribution_a, distribution_b, name=name)
