"""`tf.keras.initializers`: the TF initializers under Keras's names, by object or name."""

from __future__ import annotations

from tensorweave.ops import init_ops
from tensorweave.ops.init_ops import (  # noqa: F401 - Keras's names for them
    Constant,
    GlorotNormal,
    GlorotUniform,
    Identity,
    Initializer,
    Ones,
    Orthogonal,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
    VarianceScaling,
    Zeros,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)

zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
orthogonal, identity = Orthogonal, Identity


def uniform(minval=-0.05, maxval=0.05, seed=None):
    """Keras's "uniform": U(-0.05, 0.05) (Embedding's default)."""
    return init_ops.RandomUniform(minval, maxval, seed=seed)


def get(identifier):
    """An initializer from a name ("glorot_uniform", "he_normal", "uniform", ...), a config
    dict, or an initializer as is.

    Raises:
      ValueError: an unknown name.
    """
    if identifier is None or callable(identifier) and not isinstance(identifier, type):
        return identifier
    if isinstance(identifier, dict):
        return get(identifier["class_name"])(**identifier.get("config", {}))
    if isinstance(identifier, type):
        return identifier()
    if identifier == "uniform":
        return uniform()
    fn = globals().get(str(identifier))
    if fn is None:
        raise ValueError(f"Could not interpret initializer identifier: {identifier}")
    return fn() if identifier not in ("he_normal", "he_uniform", "lecun_normal",
                                      "lecun_uniform") else fn()
