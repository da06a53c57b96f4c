"""`tf.distributions` (TF1's, deprecated there in favour of TensorFlow Probability):
Normal, Bernoulli, Categorical, Uniform, Multinomial, Beta, Gamma, Dirichlet, Exponential,
Laplace, StudentT, built from existing ops; `kl_divergence` and `RegisterKL`."""

from tensorweave.distributions.continuous import Laplace, Normal, Uniform
from tensorweave.distributions.discrete import Bernoulli, Categorical, Multinomial
from tensorweave.distributions.distribution import (
                                                    FULLY_REPARAMETERIZED,
                                                    NOT_REPARAMETERIZED,
                                                    Distribution,
                                                    RegisterKL,
                                                    ReparameterizationType,
                                                    kl_divergence,
)
from tensorweave.distributions.gamma import Beta, Dirichlet, Exponential, Gamma, StudentT

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Bernoulli", "Beta", "Categorical",
           "Dirichlet", "Distribution", "Exponential", "Gamma", "Laplace", "Multinomial",
           "Normal", "RegisterKL", "ReparameterizationType", "StudentT", "Uniform",
           "kl_divergence"]
