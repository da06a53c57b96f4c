"""The TF1 optimizers, one module each (`tf.train.AdamOptimizer`, ...)."""

from tensorweave.training.optimizers.adadelta import AdadeltaOptimizer
from tensorweave.training.optimizers.adagrad import AdagradOptimizer
from tensorweave.training.optimizers.adam import AdamOptimizer
from tensorweave.training.optimizers.ftrl import FtrlOptimizer
from tensorweave.training.optimizers.gradient_descent import GradientDescentOptimizer
from tensorweave.training.optimizers.momentum import MomentumOptimizer
from tensorweave.training.optimizers.proximal import (
    ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer,
)
from tensorweave.training.optimizers.rmsprop import RMSPropOptimizer

__all__ = [
    "AdadeltaOptimizer", "AdagradOptimizer", "AdamOptimizer", "GradientDescentOptimizer",
    "MomentumOptimizer", "RMSPropOptimizer", "FtrlOptimizer", "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
]
