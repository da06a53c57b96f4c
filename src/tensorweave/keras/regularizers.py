"""`tf.keras.regularizers`: L1/L2 penalties on weights (by object or name)."""

from __future__ import annotations

from tensorweave.ops import math_ops, reduction_ops


class Regularizer:
    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x^2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        total = None
        if self.l1:
            total = self.l1 * reduction_ops.reduce_sum(math_ops.abs(x))
        if self.l2:
            term = self.l2 * reduction_ops.reduce_sum(math_ops.square(x))
            total = term if total is None else total + term
        return total if total is not None else math_ops.cast(0.0, x.dtype.base_dtype)

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):  # noqa: E741
    return L1L2(l1=l)


def l2(l=0.01):  # noqa: E741
    return L1L2(l2=l)


def l1_l2(l1=0.01, l2=0.01):  # noqa: F811
    return L1L2(l1=l1, l2=l2)


def get(identifier):
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return L1L2(**identifier.get("config", {}))
    if identifier in ("l1", "l2", "l1_l2"):
        return globals()[identifier]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
