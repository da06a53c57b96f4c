"""`tf.contrib.distributions` (TF 1.15's): the classes of `tf.distributions`, and
MultivariateNormalDiag, MultivariateNormalTriL, MultivariateNormalFullCovariance (with their
KL), Poisson and Logistic."""

from tensorweave.distributions import *  # noqa: F401, F403
from tensorweave.distributions import __all__ as _core_all
from tensorweave.distributions.mvn import (  # noqa: F401
    MultivariateNormalDiag,
    MultivariateNormalFullCovariance,
    MultivariateNormalLinearOperator,
    MultivariateNormalTriL,
)
from tensorweave.distributions.poisson_logistic import Logistic, Poisson  # noqa: F401

__all__ = sorted(_core_all + ["Logistic", "MultivariateNormalDiag",
                              "MultivariateNormalFullCovariance",
                              "MultivariateNormalLinearOperator", "MultivariateNormalTriL",
                              "Poisson"])
