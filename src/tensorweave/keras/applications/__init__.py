"""`tf.keras.applications`: model architectures (built with `weights=None`; pretrained weights
are a download this runtime does not make — put Keras's weight file in ~/.keras/models to use
`weights="imagenet"`, or pass a path)."""

from tensorweave.keras.applications import inception_v3
from tensorweave.keras.applications.inception_v3 import InceptionV3

__all__ = ["InceptionV3", "inception_v3"]
