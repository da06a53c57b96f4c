"""Autodiff: gradient functions per op type, and `gradients()` (built on them).

Importing this package registers the gradient function of every op family.
"""

from tensorweave.autodiff import (  # noqa: F401  (registration)
    array_grad,
    control_flow_grad,
    conv3d_grad,
    ctc_grad,
    data_flow_grad,
    image_grad,
    linalg_grad,
    math_extra_grad,
    math_grad,
    nn_grad,
    pool_grad,
    sampling_grad,
    sequence_grad,
    signal_grad,
    sparse_grad,
    special_grad,
    state_grad,
    string_grad,
    tensor_array_grad,
)
from tensorweave.autodiff.gradients import AggregationMethod, UnconnectedGradients, gradients
from tensorweave.autodiff.registry import NotDifferentiable, RegisterGradient, no_gradient

__all__ = ["gradients", "AggregationMethod", "UnconnectedGradients", "RegisterGradient",
           "NotDifferentiable", "no_gradient"]
