"""`tf.test`: gradient checking against finite differences."""

from tensorweave.client.gradient_checker import compute_gradient, compute_gradient_error  # noqa: F401
