"""`tf.test`: gradient checking against finite differences."""

from tensorweave.autodiff.checker import compute_gradient, compute_gradient_error  # noqa: F401
