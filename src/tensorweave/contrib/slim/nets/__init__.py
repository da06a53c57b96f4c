"""`tf.contrib.slim.nets` (TF 1.15): the slim network definitions; here `vgg`."""

from tensorweave.contrib.slim.nets import vgg

__all__ = ["vgg"]
