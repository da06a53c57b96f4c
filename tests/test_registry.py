"""One registry type for ops, kernels, gradients and passes: one duplicate rule, one error."""

from __future__ import annotations

import pytest

import tensorweave as tf
from tensorweave.master.passes import register_pass
from tensorweave.registry import AlreadyRegisteredError, Registry


def test_every_registry_refuses_a_duplicate_with_one_error_type():
    attempts = [
        lambda: tf.register_op("Sin", inputs=["x: float"], outputs=["y: float"]),
        lambda: tf.register_kernel("Sin")(lambda node: None),
        lambda: tf.RegisterGradient("Sin")(lambda op, g: g),
        lambda: register_pass("cse", "again")(lambda view, ctx: None),
    ]
    for attempt in attempts:
        with pytest.raises(AlreadyRegisteredError, match="(first at|registered at|was in) "
                                                         r"\S+\.py:\d+"):
            attempt()


def test_the_error_is_what_tf_raises_for_each():
    assert issubclass(AlreadyRegisteredError, KeyError)     # a gradient twice, as TF's
    assert issubclass(AlreadyRegisteredError, ValueError)   # an op or kernel twice
    r: Registry[str, int] = Registry("Thing")
    r.register("a", 1)
    with pytest.raises(AlreadyRegisteredError) as info:
        r.register("a", 2)
    assert str(info.value).startswith("Thing 'a' is already registered (first at ")
    assert r["a"] == 1 and list(r) == ["a"] and r.site("a").endswith(".py:" +
                                                                     r.site("a").split(":")[-1])
